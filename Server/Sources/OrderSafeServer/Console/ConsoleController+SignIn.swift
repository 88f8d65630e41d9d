import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import OrderSafeModel

extension ConsoleController {
    struct SignInForm: Decodable {
        var key: String
    }

    func addSignInRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        admin.get("sign-in") { request, _ in
            if try await sessions.current(request) != nil { return ConsoleViews.redirect("/admin") }
            return signInPage(request, problem: nil, status: .ok)
        }
        admin.post("sign-in") { request, context in
            try await signIn(request, context)
        }
        admin.post("sign-out") { request, context in
            let language = ConsoleLanguage(request)
            guard let session = try await sessions.current(request) else {
                return ConsoleViews.redirect("/admin/sign-in")
            }
            do {
                _ = try await Self.form(CSRFField.self, request, context) {
                    ConsoleSessions.same($0, session.csrfToken)
                }
            } catch let error as ConsolePageError {
                return signInPage(
                    request, problem: error.message(ConsoleText.texts(language)), status: error.status,
                    keepSession: true)
            }
            try await sessions.close(session)
            context.logger.notice("console sign-out", metadata: ["operator": "\(session.operatorName)"])
            var headers = HTTPFields()
            headers[.setCookie] = sessions.expired(ConsoleSessions.cookieName).description
            return ConsoleViews.redirect("/admin/sign-in?done=signed_out", headers: headers)
        }
    }

    /// Checks the form's double-submit token, the address's attempt budget and the key, in that order.
    private func signIn(_ request: Request, _ context: OrderSafeRequestContext) async throws -> Response {
        let texts = ConsoleText.texts(ConsoleLanguage(request))
        let address = context.clientAddress ?? "unknown"
        let expected = request.cookies[ConsoleSessions.signInCookieName]?.value ?? ""
        let form: SignInForm
        do {
            form = try await Self.form(SignInForm.self, request, context) { ConsoleSessions.same($0, expected) }
        } catch let error as ConsolePageError {
            return signInPage(request, problem: error.message(texts), status: error.status)
        }
        // Only refused keys spend the address's budget: an operator signing in again and again is never locked out,
        // even behind a proxy where every operator has one address.
        if signInLimiter.isSpent("sign-in:" + address) {
            context.logger.warning("console sign-in refused: too many attempts", metadata: ["address": "\(address)"])
            return signInPage(request, problem: texts["sign_in_limited"], status: .tooManyRequests)
        }
        guard form.key.utf8.count <= 256, let operatorName = keys.operatorName(forKey: form.key) else {
            _ = signInLimiter.take("sign-in:" + address)
            context.logger.warning("console sign-in refused: wrong key", metadata: ["address": "\(address)"])
            try await ledger.logOperatorAction(
                OperatorAction(
                    operatorName: "?", action: .signInRefused, target: String(address.prefix(64)), at: clock.now()))
            return signInPage(request, problem: texts["sign_in_failed"], status: .unauthorized)
        }
        let token = try await sessions.open(operatorName: operatorName)
        context.logger.notice("console sign-in", metadata: ["operator": "\(operatorName)", "address": "\(address)"])
        var headers = HTTPFields()
        headers.append(HTTPField(name: .setCookie, value: sessions.cookie(token).description))
        headers.append(
            HTTPField(name: .setCookie, value: sessions.expired(ConsoleSessions.signInCookieName).description))
        return ConsoleViews.redirect("/admin", headers: headers)
    }

    /// The sign-in form with a fresh double-submit token in a cookie and in the form; `keepSession` leaves the
    /// session cookie alone (a sign-out whose form was refused).
    func signInPage(_ request: Request, problem: String?, status: HTTPResponse.Status, keepSession: Bool = false)
        -> Response
    {
        let language = ConsoleLanguage(request)
        let texts = ConsoleText.texts(language)
        let zone = ConsoleFormat.zone(
            cookie: request.cookies[ConsoleFormat.zoneCookieName]?.value, fallback: defaultZone)
        var values = frame(language: language, request: request, title: texts["sign_in"] ?? "", zone: zone)
        let token = ConsoleSessions.randomToken()
        values["signInToken"] = token
        if let problem { values["problem"] = problem }
        if request.uri.queryParameters["done"] == "signed_out" { values["notice"] = texts["signed_out"] }
        var headers = HTTPFields()
        headers.append(HTTPField(name: .setCookie, value: sessions.signInCookie(token).description))
        if !keepSession, request.cookies[ConsoleSessions.cookieName] != nil {
            headers.append(HTTPField(name: .setCookie, value: sessions.expired(ConsoleSessions.cookieName).description))
        }
        return views.page("sign_in", values, status: status, headers: headers)
    }
}
