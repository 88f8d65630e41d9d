import Engine
import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import Logging
import OrderSafeModel

/// The operator console under `/admin`: server-rendered pages over the ledger, forms for the operator's actions,
/// sign-in with the admin key or a named operator key. Reading works with JavaScript off; every form carries the
/// session's CSRF token and answers with a redirect (post, redirect, get).
struct ConsoleController: Sendable {
    let ledger: any OperatorReads & OperatorActions & OrderBook & HoldingsReader & SubscriptionReads & OfferBook
    let desk: OperatorDesk
    let catalog: ActiveCatalog
    let subscriptions: Subscriptions
    let sessions: ConsoleSessions
    let keys: OperatorKeys
    let signInLimiter: RateLimiter
    let views: ConsoleViews
    let defaultZone: String
    let clock: any WallClock
    /// The scheduled backups, whose last good one the Operations page shows; nil when none are scheduled.
    let backups: BackupSchedule?
    /// Whether a merchant webhook endpoint is configured: without one the ledger keeps no webhook events, and an
    /// order's page says so instead of showing an empty list as if nothing had happened.
    let webhooksConfigured: Bool

    /// The largest form body accepted.
    static let maxFormBytes = 8 << 10

    func addRoutes(to router: Router<OrderSafeRequestContext>) {
        router.get("/") { _, _ in ConsoleViews.redirect("/admin") }
        let admin = router.group("admin")
        admin.get("assets/:file") { request, context in
            let file = try context.parameters.require("file")
            guard let response = views.asset(file, version: request.uri.queryParameters["v"].map(String.init)) else {
                throw HTTPError(.notFound)
            }
            return response
        }
        admin.get("language") { request, _ in language(request) }
        addSignInRoutes(to: admin)
        addPageRoutes(to: admin)
        addStatementRoutes(to: admin)
        addOfferRoutes(to: admin)
        addActionRoutes(to: admin)
    }

    /// Sets the language cookie and goes back to the page the switch was on (a console path only).
    private func language(_ request: Request) -> Response {
        let wanted =
            request.uri.queryParameters["to"].flatMap { ConsoleLanguage(rawValue: String($0)) }
            ?? ConsoleLanguage(request).other
        let back = Self.localPath(request.uri.queryParameters["back"].map(String.init)) ?? "/admin"
        var headers = HTTPFields()
        headers[.setCookie] =
            Cookie(
                name: ConsoleLanguage.cookieName, value: wanted.rawValue, maxAge: 365 * 86400, path: "/admin",
                secure: sessions.secureCookie,
                httpOnly: true, sameSite: .strict
            ).description
        return ConsoleViews.redirect(back, headers: headers)
    }

    /// `path` when it is a path of this console (no scheme, host or `//`), else nil: redirects never leave it.
    static func localPath(_ path: String?) -> String? {
        guard let path, path.utf8.count <= 512,
            path == "/admin" || path.hasPrefix("/admin/") || path.hasPrefix("/admin?"),
            !path.contains("//"), !path.contains("\\"),
            path.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 })
        else { return nil }
        return path
    }

    // MARK: The frame every page shares

    /// What a handler of a signed-in page has at hand.
    struct PageRequest {
        var request: Request
        var context: OrderSafeRequestContext
        var session: OperatorSession
        var language: ConsoleLanguage
        var format: ConsoleFormat
        var texts: [String: String] { ConsoleText.texts(language) }
    }

    enum Section { case overview, orders, statements, offers, operations, none }

    /// Runs `body` for a signed-in operator (others go to the sign-in page) and turns its errors into pages.
    func signedIn(
        _ request: Request, _ context: OrderSafeRequestContext, _ body: (PageRequest) async throws -> Response
    ) async throws -> Response {
        let language = ConsoleLanguage(request)
        let format = ConsoleFormat(
            zone: ConsoleFormat.zone(
                cookie: request.cookies[ConsoleFormat.zoneCookieName]?.value, fallback: defaultZone))
        guard let session = try await sessions.current(request) else {
            return ConsoleViews.redirect("/admin/sign-in")
        }
        let page = PageRequest(request: request, context: context, session: session, language: language, format: format)
        do {
            return try await body(page)
        } catch let error as ConsolePageError {
            return errorPage(page, status: error.status, message: error.message(ConsoleText.texts(language)))
        } catch let error as AdminInputError {
            return errorPage(page, status: .badRequest, message: error.description)
        } catch let refusal as OperatorDesk.Refusal {
            // The console words what it has words for; the rest is the refusal's own message.
            let texts = ConsoleText.texts(language)
            let message =
                refusal.status == .notFound
                ? texts["not_found"] : refusal.code == OperatorDesk.notReplayable ? texts["replay_unsupported"] : nil
            return errorPage(page, status: refusal.status, message: message ?? refusal.message)
        } catch {
            context.logger.error(
                "console page failed",
                metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            return errorPage(page, status: .internalServerError, message: APIError.internalError.message)
        }
    }

    /// The values of the layout: language, switch, operator, CSRF token, time zone, notices.
    func frame(_ page: PageRequest, title: String, section: Section) -> [String: Any] {
        var values = frame(language: page.language, request: page.request, title: title, zone: page.format.zone)
        values["operatorName"] = page.session.operatorName
        values["csrf"] = page.session.csrfToken
        values["navOverview"] = section == .overview
        values["navOrders"] = section == .orders
        values["navOperations"] = section == .operations
        values["navStatements"] = section == .statements
        values["navOffers"] = section == .offers
        if let done = page.request.uri.queryParameters["done"].map(String.init), Self.notices.contains(done) {
            values["notice"] = page.texts[done]
        }
        return values
    }

    /// The layout's values for any visitor, signed in or not.
    func frame(language: ConsoleLanguage, request: Request, title: String, zone: TimeZone) -> [String: Any] {
        let back = Self.localPath(request.uri.description) ?? "/admin"
        return [
            "lang": language.htmlTag, "t": ConsoleText.texts(language), "title": title,
            "otherLang": language.other.rawValue,
            "otherLangName": language.other.ownName,
            "backPath": back.addingPercentEncoding(
                withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))) ?? "%2Fadmin",
            "zone": zone.identifier, "assetVersion": views.assetVersion,
        ]
    }

    /// The notices a redirect after an action may ask for (`?done=`): keys of ``ConsoleText``, nothing else.
    static let notices: Set<String> = [
        "refund_done", "refund_already", "refund_flagged", "resolved", "queried", "redelivered", "replayed",
        "held_replayed", "signed_out",
    ]

    func errorPage(_ page: PageRequest, status: HTTPResponse.Status, message: String) -> Response {
        var values = frame(page, title: page.texts["error_title"] ?? "", section: .none)
        values["message"] = message
        values["backLink"] =
            Self.localPath(page.request.headers.value(of: .referer).flatMap { URL(string: $0)?.path }) ?? "/admin"
        return views.page("error", values, status: status)
    }

    // MARK: Forms

    /// Reads a form body (`application/x-www-form-urlencoded`, at most ``maxFormBytes``) after checking its CSRF
    /// token against the session's: a missing or wrong token is refused before anything else is read into `T`.
    func form<T: Decodable>(_ type: T.Type, _ page: PageRequest) async throws -> T {
        try await Self.form(type, page.request, page.context) { token in
            ConsoleSessions.same(token, page.session.csrfToken)
        }
    }

    static func form<T: Decodable>(
        _ type: T.Type, _ request: Request, _ context: OrderSafeRequestContext, csrf accept: (String) -> Bool
    ) async throws -> T {
        guard
            request.headers.value(of: .contentType)?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
        else {
            throw ConsolePageError.unsupportedForm
        }
        let text: String
        do {
            text = String(buffer: try await request.body.collect(upTo: maxFormBytes))
        } catch {
            throw ConsolePageError.formTooLarge
        }
        let decoder = URLEncodedFormDecoder()
        guard let token = try? decoder.decode(CSRFField.self, from: text), accept(token.csrf) else {
            throw ConsolePageError.badCSRF
        }
        do {
            return try decoder.decode(T.self, from: text)
        } catch {
            throw ConsolePageError.badForm
        }
    }

    struct CSRFField: Decodable {
        var csrf: String
    }
}

/// Why a console page could not be shown or a form not be done, as the operator reads it.
enum ConsolePageError: Error {
    case notFound
    case badCSRF
    case unsupportedForm
    case formTooLarge
    case badForm

    var status: HTTPResponse.Status {
        switch self {
        case .notFound: .notFound
        case .badCSRF: .forbidden
        case .unsupportedForm: .unsupportedMediaType
        case .formTooLarge: .contentTooLarge
        case .badForm: .badRequest
        }
    }

    func message(_ texts: [String: String]) -> String {
        switch self {
        case .notFound: texts["not_found"] ?? "Not found."
        case .badCSRF: texts["bad_csrf"] ?? "This form has expired."
        case .unsupportedForm: "the form must be sent as application/x-www-form-urlencoded"
        case .formTooLarge: "the form is larger than \(ConsoleController.maxFormBytes) bytes"
        case .badForm: "the form is missing a field or has one twice"
        }
    }
}
