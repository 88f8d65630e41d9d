import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import OrderSafeServer

@Suite("The operator console: sign-in, sessions, CSRF, pages and actions")
struct ConsoleTests {
    static let operatorKey = "alice-key-alice-key-alice-key-0123456789"

    static func withConsole(
        extra: [String: String] = [:],
        _ body: @escaping @Sendable (ConsoleClient, OrderSafeComponents, ManualClock, String) async throws -> Void
    ) async throws {
        let token = try await TestServer.token("alice", lifetime: 30 * 86400)
        let settings = extra.merging(["ORDERSAFE_AUTH_OPERATOR_KEYS": "alice=\(operatorKey)"]) { mine, _ in mine }
        try await TestServer.withComponents(extra: settings) { client, components, clock in
            try await body(ConsoleClient(client), components, clock, token)
        }
    }

    @Test(
        "a wrong key is refused; the admin key and a named operator key sign in with a HttpOnly, SameSite=Strict cookie"
    )
    func signIn() async throws {
        try await Self.withConsole { browser, components, _, _ in
            let anonymous = try await browser.get("/admin")
            #expect(anonymous.status == .seeOther && anonymous.location == "/admin/sign-in")
            let wrong = try await browser.signIn("not-the-key-not-the-key-not-the-key-0000")
            #expect(wrong.status == .unauthorized)
            #expect(wrong.html.contains("That key is not valid."))
            let response = try await browser.client.execute(uri: "/admin/sign-in", method: .get)
            let cookie = try #require(response.headers[values: .setCookie].first { $0.hasPrefix("ordersafe_sign_in=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let admin = try await browser.signIn(TestServer.adminKey)
            #expect(admin.status == .seeOther && admin.location == "/admin")
            let overview = try await browser.get("/admin")
            #expect(overview.status == .ok)
            #expect(overview.html.contains(#"<b id="operator">admin</b>"#))
            let actions = try await components.ledger.operatorActions(limit: 10).map(\.action)
            #expect(actions.prefix(2) == [.signIn, .signInRefused])

            let other = ConsoleClient(browser.client)
            #expect(try await other.signIn(Self.operatorKey).status == .seeOther)
            #expect(try await other.get("/admin").html.contains(#"<b id="operator">alice</b>"#))
        }
    }

    @Test("the session cookie is HttpOnly, SameSite=Strict, scoped to /admin, and Secure when configured")
    func sessionCookie() async throws {
        try await TestServer.withComponents(extra: ["ORDERSAFE_CONSOLE_SECURE_COOKIE": "true"]) { client, _, _ in
            let page = try await client.execute(uri: "/admin/sign-in", method: .get)
            let signInCookie = try #require(page.headers[values: .setCookie].first)
            let token = try #require(ConsoleClient.firstMatch(#"ordersafe_sign_in=([^;]+)"#, in: signInCookie))
            let response = try await client.execute(
                uri: "/admin/sign-in", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "ordersafe_sign_in=\(token)"],
                body: ByteBuffer(string: "csrf=\(token)&key=\(TestServer.adminKey)"))
            #expect(response.status == .seeOther)
            let session = try #require(
                response.headers[values: .setCookie].first { $0.hasPrefix("ordersafe_console=") })
            for attribute in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/admin"] {
                #expect(session.contains(attribute), "\(attribute) in \(session)")
            }
        }
    }

    @Test("a form without its CSRF token, or with another session's, is refused and changes nothing")
    func csrf() async throws {
        try await Self.withConsole { browser, components, clock, _ in
            let orderNo = try await Self.flaggedOrder(components, clock)
            try await browser.signIn(TestServer.adminKey)
            try await browser.get("/admin/orders/\(orderNo)")
            let missing = try await browser.post(
                "/admin/orders/\(orderNo)/resolve", ["note": "checked"], csrf: .some(nil))
            #expect(missing.status == .forbidden)
            #expect(missing.html.contains("did not come from this console"))
            let forged = try await browser.post(
                "/admin/orders/\(orderNo)/resolve", ["note": "checked"], csrf: "A" + String(repeating: "b", count: 42))
            #expect(forged.status == .forbidden)
            #expect(try await components.ledger.dossier(orderNo: orderNo)?.flagWaiting == true)
            let signIn = ConsoleClient(browser.client)
            try await signIn.get("/admin/sign-in")
            let noDoubleSubmit = try await signIn.post("/admin/sign-in", ["key": TestServer.adminKey], csrf: .some(nil))
            #expect(noDoubleSubmit.status == .forbidden)
        }
    }

    @Test("after sign-out the old session cookie opens nothing; an idle session expires")
    func signOutAndExpiry() async throws {
        try await Self.withConsole { browser, _, clock, _ in
            try await browser.signIn(TestServer.adminKey)
            try await browser.get("/admin")
            let stolen = try #require(browser.cookies["ordersafe_console"])
            let out = try await browser.post("/admin/sign-out")
            #expect(out.status == .seeOther && out.location == "/admin/sign-in?done=signed_out")
            let replay = ConsoleClient(browser.client)
            replay.set("ordersafe_console", stolen)
            let again = try await replay.get("/admin")
            #expect(again.status == .seeOther && again.location == "/admin/sign-in")

            try await browser.signIn(TestServer.adminKey)
            clock.advance(by: 29 * 60)
            #expect(try await browser.get("/admin").status == .ok)
            clock.advance(by: 29 * 60)
            #expect(try await browser.get("/admin").status == .ok, "use keeps a session alive")
            clock.advance(by: 31 * 60)
            #expect(try await browser.get("/admin").location == "/admin/sign-in")
        }
    }

    @Test("a short idle limit is kept to the second: every request within it keeps the session alive")
    func shortIdleLimit() async throws {
        try await Self.withConsole(extra: ["ORDERSAFE_CONSOLE_IDLE_MINUTES": "1"]) { browser, _, clock, _ in
            try await browser.signIn(TestServer.adminKey)
            for step in 0..<6 {
                clock.advance(by: 50)
                #expect(
                    try await browser.get("/admin").status == .ok,
                    "a request 50 s after the last one (step \(step)) is within the minute")
            }
            clock.advance(by: 61)
            #expect(try await browser.get("/admin").location == "/admin/sign-in")
        }
    }

    @Test("a session ends at its absolute lifetime however busy it is")
    func absoluteLifetime() async throws {
        try await Self.withConsole(extra: ["ORDERSAFE_CONSOLE_SESSION_HOURS": "2"]) { browser, _, clock, _ in
            try await browser.signIn(TestServer.adminKey)
            for _ in 0..<11 {
                clock.advance(by: 10 * 60)
                #expect(try await browser.get("/admin").status == .ok)
            }
            clock.advance(by: 11 * 60)
            #expect(
                try await browser.get("/admin").location == "/admin/sign-in", "2 h 1 min after sign-in, busy all along")
            try await browser.signIn(TestServer.adminKey)
            #expect(try await browser.get("/admin").status == .ok, "signing in again opens a new session")
        }
    }

    @Test("sign-in attempts from one address are limited")
    func signInLimit() async throws {
        try await Self.withConsole { browser, _, _, _ in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<11 {
                statuses.append(try await browser.signIn("wrong-wrong-wrong-wrong-wrong-wrong-0000").status)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 == .unauthorized })
            let limited = try await browser.signIn(TestServer.adminKey)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.html.contains("Too many failed sign-ins"))
        }
    }

    @Test("only refused keys count against an address: the operator signing in again and again is never locked out")
    func successfulSignInsAreFree() async throws {
        try await Self.withConsole { browser, _, _, _ in
            for attempt in 0..<30 {
                // a new browser, or the session ended: the same address signs in again
                browser.drop("ordersafe_console")
                let answer = try await browser.signIn(TestServer.adminKey)
                #expect(answer.status == .seeOther, "sign-in \(attempt): \(answer.status) \(answer.html.prefix(300))")
            }
            browser.drop("ordersafe_console")
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<11 {
                statuses.append(try await browser.signIn("wrong-wrong-wrong-wrong-wrong-wrong-0000").status)
            }
            #expect(
                statuses.prefix(10).allSatisfy { $0 == .unauthorized } && statuses.last == .tooManyRequests,
                "\(statuses)")
        }
    }

    @Test("bad filters and forms get a clear message naming the field, never a 500")
    func badInput() async throws {
        try await Self.withConsole { browser, components, clock, _ in
            let orderNo = try await Self.flaggedOrder(components, clock)
            try await browser.signIn(TestServer.adminKey)
            let cases: [(String, String)] = [
                ("/admin/orders?status=lost", "'status' must be one of"),
                ("/admin/orders?channel=paypal", "'channel' must be one of"),
                ("/admin/orders?from=2026-02-30", "'from' must be a day written YYYY-MM-DD"),
                ("/admin/orders?from=2026-11-20&to=2026-11-01", "'to' must not be before 'from'"),
                ("/admin/orders?cursor=1_2_3", "'cursor' is not a cursor this server gave"),
                ("/admin/orders?limit=0", "'limit' must be a whole number from 1 to 200"),
                ("/admin/orders?page=2", "'page' is not a filter"),
                ("/admin/orders?q=a&q=b", "'q' is given more than once"),
                (
                    "/admin/orders?q=" + String(repeating: "x", count: 129),
                    "'q' must be at most 128 printable characters"
                ),
            ]
            for (uri, message) in cases {
                let page = try await browser.get(uri)
                #expect(page.status == .badRequest, "\(uri)")
                #expect(
                    page.html.contains(message.replacingOccurrences(of: "'", with: "&#39;")),
                    "\(uri): \(page.html.prefix(200))")
            }
            #expect(try await browser.get("/admin/orders/NOPE").status == .notFound)
            let empty = try await browser.post("/admin/orders/\(orderNo)/resolve", ["note": "   "])
            #expect(empty.status == .badRequest)
            let missing = try await browser.post("/admin/orders/\(orderNo)/resolve")
            #expect(missing.status == .badRequest)
            let replay = try await browser.post("/admin/inbox/abc/replay")
            #expect(replay.status == .notFound)
            let unknownHook = try await browser.post("/admin/webhooks/evt_nope/redeliver")
            #expect(unknownHook.status == .notFound)
            var raw = HTTPFields()
            raw[.cookie] = browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            raw[.contentType] = "text/plain"
            let wrongType = try await browser.client.execute(
                uri: "/admin/orders/\(orderNo)/resolve", method: .post, headers: raw, body: ByteBuffer(string: "note=x")
            )
            #expect(wrongType.status == .unsupportedMediaType)
            raw[.contentType] = "application/x-www-form-urlencoded"
            let huge = try await browser.client.execute(
                uri: "/admin/orders/\(orderNo)/resolve", method: .post, headers: raw,
                body: ByteBuffer(string: "note=" + String(repeating: "x", count: 9000)))
            #expect(huge.status == .contentTooLarge)
        }
    }

    @Test("a flag is resolved with a note naming the operator, once; the overview stops counting it")
    func resolveFlag() async throws {
        try await Self.withConsole { browser, components, clock, _ in
            let orderNo = try await Self.flaggedOrder(components, clock)
            try await browser.signIn(Self.operatorKey)
            #expect(try await browser.get("/admin").html.contains(#"id="flagged-waiting">1<"#))
            let page = try await browser.get("/admin/orders/\(orderNo)")
            #expect(page.html.contains(#"id="flag-waiting""#))
            let resolved = try await browser.post(
                "/admin/orders/\(orderNo)/resolve", ["note": "paid the difference by bank transfer"])
            #expect(resolved.status == .seeOther)
            let after = try await browser.get(try #require(resolved.location))
            #expect(after.html.contains("The flag is resolved."))
            #expect(after.html.contains("paid the difference by bank transfer"))
            #expect(after.html.contains("operator:alice"))
            #expect(!after.html.contains(#"id="flag-waiting""#))
            #expect(try await browser.get("/admin").html.contains(#"id="flagged-waiting">0<"#))
            let again = try await components.ledger.resolveFlag(
                orderNo: orderNo, operatorName: "alice", note: "twice", at: clock.now())
            #expect(again == .notApplicable("the flag of order '\(orderNo)' is already resolved"))
        }
    }

    @Test("an order's page says when no webhook endpoint is configured, and lists the events when one is")
    func webhookEndpointOnOrderPage() async throws {
        for (extra, configured) in [([String: String](), false), (TestServer.webhookEndpoint, true)] {
            try await Self.withConsole(extra: extra) { browser, components, clock, _ in
                let orderNo = try await Self.flaggedOrder(components, clock)
                try await browser.signIn(Self.operatorKey)
                let page = try await browser.get("/admin/orders/\(orderNo)").html
                #expect(page.contains(#"id="webhooks-unconfigured""#) == !configured)
                #expect(page.contains("order.flagged") == configured)
            }
        }
    }

    @Test("an Alipay order is refunded from the console after a confirmation; the reversal shows on its page")
    func refund() async throws {
        try await Self.withConsole { browser, components, _, alice in
            let created = try await ReconciliationFlowTests.order(browser.client, alice, channel: "alipay")
            try await ReconciliationFlowTests.pay(browser.client, created)
            _ = try await components.reconciler.settle(orderNo: created.order.orderNo)
            let orderNo = created.order.orderNo
            try await browser.signIn(Self.operatorKey)
            let page = try await browser.get("/admin/orders/\(orderNo)")
            #expect(page.html.contains(#"id="refund""#))
            let confirm = try await browser.get("/admin/orders/\(orderNo)/refund")
            #expect(confirm.html.contains("Refund this order?"))
            let done = try await browser.post("/admin/orders/\(orderNo)/refund", ["reason": "customer request"])
            #expect(done.status == .seeOther, "\(done.html.prefix(300))")
            let after = try await browser.get(try #require(done.location))
            #expect(after.html.contains("Refunded."))
            #expect(after.html.contains(#"id="order-status">refunded<"#))
            #expect(after.html.contains("operator:alice"))
            #expect(try await components.ledger.dossier(orderNo: orderNo)?.payments.first?.reversal == .refunded)
            let twice = try await browser.post("/admin/orders/\(orderNo)/refund", [:])
            #expect(try await browser.get(try #require(twice.location)).html.contains("It was already refunded."))
        }
    }

    @Test("orders are found by order number, transaction id and user; filters and keyset pages list each order once")
    func ordersList() async throws {
        try await Self.withConsole { browser, components, clock, alice in
            var numbers: [String] = []
            for index in 0..<7 {
                let order = try await TestServer.createOrder(browser.client, token: alice).decoded(OrderResponse.self)
                    .order
                numbers.append(order.orderNo)
                if index == 3 {
                    _ = try await components.ledger.fulfil(
                        VerifiedPayment(
                            channel: .appStore, providerTransactionID: "2000000999", orderNo: order.orderNo,
                            amount: order.amount,
                            cause: .app, evidence: "test", originalTransactionID: "2000000100"),
                        at: clock.now())
                }
                clock.advance(by: 1)
            }
            try await browser.signIn(TestServer.adminKey)
            for search in [numbers[3], "2000000999", "2000000100"] {
                let found = ConsoleClient.allMatches(
                    #"class="order-link" href="/admin/orders/([^"]+)""#,
                    in: try await browser.get("/admin/orders?q=\(search)").html)
                #expect(found == [numbers[3]], "\(search)")
            }
            var seen: [String] = []
            var uri: String? = "/admin/orders?user=alice&limit=3"
            while let next = uri {
                let page = try await browser.get(next)
                #expect(page.status == .ok)
                seen += ConsoleClient.allMatches(#"class="order-link" href="/admin/orders/([^"]+)""#, in: page.html)
                uri = ConsoleClient.firstMatch(#"id="next-page" href="([^"]+)""#, in: page.html)?.replacingOccurrences(
                    of: "&amp;", with: "&")
            }
            #expect(seen == numbers.reversed())
            let fulfilled = try await browser.get("/admin/orders?status=fulfilled")
            #expect(
                ConsoleClient.allMatches(#"class="order-link" href="/admin/orders/([^"]+)""#, in: fulfilled.html) == [
                    numbers[3]
                ])
            let user = try await browser.get("/admin/users/alice")
            #expect(user.html.contains(numbers[0]))
        }
    }

    @Test(
        "user ids with characters a path escapes open that user, in the console and the admin API; another user whose id is the escaped text stays apart"
    )
    func escapedUserIDs() async throws {
        try await Self.withConsole { browser, _, _, _ in
            _ = try await browser.signIn(TestServer.adminKey)
            var orders: [String: String] = [:]
            for user in ["a<b>c", "a%3Cb%3Ec", "张三", "alice@example.com"] {
                let token = try await TestServer.token(user)
                orders[user] = try await TestServer.createOrder(browser.client, token: token).decoded(
                    OrderResponse.self
                ).order.orderNo
            }
            for (user, orderNo) in orders {
                let path = ConsoleController.pathSegment(user)
                let page = try await browser.get("/admin/users/" + path)
                #expect(page.status == .ok, "\(user)")
                #expect(page.html.contains(orderNo), "\(user): its own order")
                #expect(
                    orders.filter { $0.key != user }.allSatisfy { !page.html.contains($0.value) },
                    "\(user): nobody else's")
                let api = try await browser.client.execute(
                    uri: "/v1/admin/users/" + path, method: .get, headers: TestServer.bearer(TestServer.adminKey))
                struct User: Decodable {
                    var user_id: String
                    var orders: [Order]
                }
                let answer = try api.decoded(User.self)
                #expect(answer.user_id == user && answer.orders.map(\.orderNo) == [orderNo], "\(user)")
            }
            let malformed = try await browser.client.execute(
                uri: "/v1/admin/users/a%ZZ", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(malformed.status == .badRequest)
        }
    }

    @Test(
        "the admin API pages like the console, refuses empty or unknown parameters, and names the operator of an action"
    )
    func adminAPI() async throws {
        try await Self.withConsole { browser, components, clock, alice in
            let client = browser.client
            var numbers: [String] = []
            for _ in 0..<3 {
                numbers.append(
                    try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order.orderNo)
                clock.advance(by: 1)
            }
            let operatorAuth: HTTPFields = [.authorization: "Bearer \(Self.operatorKey)"]
            struct Page: Decodable {
                var orders: [Order]
                var next_cursor: String?
            }
            var seen: [String] = []
            var uri: String? = "/v1/admin/orders?user=alice&limit=2"
            while let next = uri {
                let page = try await client.execute(uri: next, method: .get, headers: operatorAuth).decoded(Page.self)
                seen += page.orders.map(\.orderNo)
                uri = page.next_cursor.map { "/v1/admin/orders?user=alice&limit=2&cursor=\($0)" }
            }
            #expect(seen == numbers.reversed())
            for bad in ["to=", "status=", "page=2", "tz=Mars%2FOlympus", "limit=201"] {
                let response = try await client.execute(
                    uri: "/v1/admin/orders?\(bad)", method: .get, headers: operatorAuth)
                #expect(response.status == .badRequest, "\(bad)")
                #expect(try response.errorCode() == "invalid_parameter", "\(bad)")
            }
            var jsonAuth = operatorAuth
            jsonAuth[.contentType] = "application/json"
            let flagged = try await Self.flaggedOrder(components, clock)
            let resolved = try await client.execute(
                uri: "/v1/admin/orders/\(flagged)/resolve", method: .post,
                headers: jsonAuth, body: ByteBuffer(string: #"{"note":"checked by phone"}"#))
            #expect(resolved.status == .ok)
            #expect(String(buffer: resolved.body).contains(#""flag_waiting":false"#))
            let again = try await client.execute(
                uri: "/v1/admin/orders/\(flagged)/resolve", method: .post,
                headers: jsonAuth, body: ByteBuffer(string: #"{"note":"again"}"#))
            #expect(again.status == .conflict)
            let log = try await components.ledger.operatorActions(limit: 5)
            #expect(log.first.map { [$0.operatorName, $0.action.rawValue] } == ["alice", "resolve_flag"])
            let stats = try await client.execute(
                uri: "/v1/admin/stats?tz=Asia%2FShanghai", method: .get, headers: operatorAuth)
            #expect(String(buffer: stats.body).contains(#""flagged_waiting":0"#))
        }
    }

    @Test("the language follows Accept-Language and the switch; money and times are written for people")
    func language() async throws {
        try await Self.withConsole { browser, components, clock, alice in
            let created = try await ReconciliationFlowTests.order(browser.client, alice, channel: "alipay")
            // Real money, so the chart has revenue to draw (the sandbox's payments are never revenue).
            _ = try await components.ledger.fulfil(
                VerifiedPayment(
                    channel: .alipay, providerTransactionID: "2026112622001", orderNo: created.order.orderNo,
                    amount: created.order.amount,
                    cause: .notification, evidence: "test"),
                at: clock.now())
            browser.acceptLanguage = "zh-CN,zh;q=0.9,en;q=0.8"
            try await browser.signIn(TestServer.adminKey)
            let chinese = try await browser.get("/admin")
            #expect(chinese.html.contains(#"<html lang="zh-Hans">"#))
            #expect(chinese.html.contains("近 30 天已支付收入"))
            #expect(chinese.html.contains("<svg"), "a paid order draws the chart")
            let switched = try await browser.get("/admin/language?to=en&back=%2Fadmin%2Forders")
            #expect(switched.location == "/admin/orders")
            let english = try await browser.get("/admin/orders/\(created.order.orderNo)")
            #expect(english.html.contains(#"<html lang="en">"#))
            #expect(english.html.contains("CNY \(ConsoleFormat.amount(created.order.amount.amountMinor, digits: 2))"))
            let offsite = try await browser.get("/admin/language?to=en&back=https%3A%2F%2Fevil.example%2F")
            #expect(offsite.location == "/admin")
        }
    }

    @Test("money keeps the currency's digits, in integers")
    func money() {
        #expect(ConsoleFormat.money(Money(amountMinor: 123_456, currency: .cny)) == "CNY 1,234.56")
        #expect(ConsoleFormat.money(Money(amountMinor: 1200, currency: CurrencyCode("JPY")!)) == "JPY 1,200")
        #expect(ConsoleFormat.money(Money(amountMinor: 125, currency: CurrencyCode("KWD")!)) == "KWD 0.125")
        #expect(ConsoleFormat.money(Money(amountMinor: -5, currency: .usd)) == "USD -0.05")
        #expect(ConsoleFormat.amount(.min, digits: 2) == "-92,233,720,368,547,758.08")
    }

    @Test("Accept-Language weights choose the language")
    func acceptLanguage() {
        #expect(ConsoleLanguage.preferred(acceptLanguage: "zh-CN,zh;q=0.9") == .simplifiedChinese)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "en;q=0.5, zh-TW;q=0.8") == .simplifiedChinese)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "fr, en-GB;q=0.7, zh;q=0.3") == .english)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "zh;q=0, en;q=0.1") == .english)
        #expect(ConsoleLanguage.preferred(acceptLanguage: "") == .english)
    }

    @Test("operator keys are validated at start, naming the problem")
    func operatorKeySettings() async throws {
        let key = String(repeating: "k", count: 32)
        let cases: [(String, String)] = [
            ("bob", "each entry must be name=key"),
            ("Bob=\(key)", "each entry must be name=key"),
            ("admin=\(key)", "'admin' is the admin key's operator name"),
            ("bob=short", "the key of 'bob' must be at least 32 characters"),
            ("bob=\(key),bob=\(key)x", "'bob' is named twice"),
            ("bob=\(key),eve=\(key)", "two operators have the same key"),
        ]
        for (value, reason) in cases {
            let error = await #expect(throws: SettingsError.self, "\(value)") {
                try await TestServer.settings(extra: ["ORDERSAFE_AUTH_OPERATOR_KEYS": value])
            }
            #expect(error?.reason.hasPrefix(reason) == true, "\(String(describing: error))")
        }
        let settings = try await TestServer.settings(extra: [
            "ORDERSAFE_AUTH_OPERATOR_KEYS": "bob=\(key), eve.ops=\(key)y"
        ])
        #expect(settings.console.operatorKeys == ["bob": key, "eve.ops": key + "y"])
        await #expect(throws: SettingsError.self) {
            try await TestServer.settings(extra: ["ORDERSAFE_CONSOLE_TIME_ZONE": "Mars/Olympus"])
        }
    }

    /// An App Store order paid with the wrong amount: recorded and flagged.
    static func flaggedOrder(_ components: OrderSafeComponents, _ clock: ManualClock) async throws -> String {
        let product = try #require(components.catalog.catalog.products.first { $0.appStoreProductID != nil })
        let created = try await components.orders.createOrder(
            CreateOrderRequest(productID: product.id, channel: .appStore), userID: "bob", idempotencyKey: nil)
        let outcome = try await components.ledger.fulfil(
            VerifiedPayment(
                channel: .appStore, providerTransactionID: "2000000777", orderNo: created.order.orderNo,
                amount: Money(
                    amountMinor: created.order.amount.amountMinor + 1, currency: created.order.amount.currency),
                cause: .app,
                evidence: "test"),
            at: clock.now())
        guard case .flagged = outcome else { throw ConsoleTestError.notFlagged("\(outcome)") }
        return created.order.orderNo
    }

    enum ConsoleTestError: Error { case notFlagged(String) }
}
