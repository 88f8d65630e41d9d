import Foundation
import OrderSafeModel

@testable import OrderSafeKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The OrderSafe server's user API in memory, with the rules that matter to the client: orders are idempotent by
/// key, a transaction is credited once, a provider payment is credited once the provider (``providerPaid``) says so,
/// a paid order cannot be cancelled. Faults: answers 503, or no answer at all (offline).
actor FakeServer: HTTPTransport {
    private(set) var orders: [String: Order] = [:]
    private var keys: [String: String] = [:]
    /// Order numbers the provider was paid for (set by the fake vendor apps).
    private(set) var providerPaid: Set<String> = []
    /// Credits: transaction id or provider order → order number.
    private(set) var credits: [String: String] = [:]
    private(set) var balances: [String: Int64] = [:]
    private(set) var requests: [String] = []
    /// Credits given a second time for the same transaction or provider payment (must stay 0).
    private(set) var doubleCredits = 0
    var unavailable = 0
    var offline = false
    let crash: CrashPoints
    private var sequence = 0

    init(crash: CrashPoints = CrashPoints()) {
        self.crash = crash
    }

    func set(unavailable: Int) { self.unavailable = unavailable }
    /// The next `count` client results (the app back from a provider's app) are refused 401 (the app's token
    /// expired).
    func set(unauthorizedClientResults count: Int) { unauthorized = count }
    private var unauthorized = 0
    /// The next `count` App Store submissions are refused 401 likewise.
    func set(unauthorizedSubmissions count: Int) { unauthorizedSubmissions = count }
    private var unauthorizedSubmissions = 0
    /// The next `count` App Store submissions are answered 503.
    func failSubmissions(_ count: Int) { failingSubmissions = count }
    private var failingSubmissions = 0
    func set(offline: Bool) { self.offline = offline }
    /// How long each App Store submission takes to answer (so that callers overlap).
    func set(submissionDelay: Duration) { self.submissionDelay = submissionDelay }
    /// Answers `GET /v1/me/entitlements` only after `delay`.
    func set(entitlementsDelay delay: Duration) { entitlementsDelay = delay }
    private var submissionDelay = Duration.zero
    private var entitlementsDelay = Duration.zero
    /// `POST /v1/appstore/sync` requests answered.
    private(set) var syncRequests = 0
    /// Cancellations answered 409 while the order stays unpaid (the provider reports the buyer still paying).
    func set(refusesCancellation: Bool) { self.refusesCancellation = refusesCancellation }
    private var refusesCancellation = false
    /// Client results answered with the provider's word, as the server does when it asks the provider then:
    /// `provider_answer` `not_paid` for an order the provider was not paid for.
    func set(asksProvider: Bool) { self.asksProvider = asksProvider }
    private var asksProvider = false

    /// Answers App Store submissions with this instead (status and body for the submitted transaction id), as a
    /// broken proxy or a misconfigured server would; nil: answers as the server does.
    func set(submissionAnswer: (@Sendable (String) -> (Int, String))?) { self.submissionAnswer = submissionAnswer }
    private var submissionAnswer: (@Sendable (String) -> (Int, String))?

    func pay(orderNo: String) { providerPaid.insert(orderNo) }

    /// The server is restored from a backup older than every order: the orders are gone. A client result naming
    /// the order's channel rebuilds one the provider was paid for, for its buyer (as the server rebuilds it from the
    /// provider's record); without the channel it is answered 404.
    func loseOrders() {
        lostOrders = orders
        orders = [:]
    }
    private var lostOrders: [String: Order] = [:]

    /// What `GET /v1/me/subscriptions` answers each user.
    func set(subscriptions: [UserSubscription], for user: String) { self.subscriptions[user] = subscriptions }

    /// Users who subscribed before: not eligible for the introductory offer.
    private(set) var ineligible: Set<String> = []
    func set(ineligible user: String) { ineligible.insert(user) }
    /// The app transactions each user's phones sent (their JWS).
    private(set) var appTransactions: [String: [String]] = [:]

    /// `POST` keeps the user's app transaction (a JWS `app.jws` is version "1.0"); both answer the user's purchases.
    private func appPurchases(method: String, user: String?, body: Data?) throws -> (Int, Data) {
        guard let user else { return (401, Data()) }
        if method == "POST" {
            let submission = try JSONDecoder().decode(AppTransactionSubmission.self, from: body ?? Data())
            appTransactions[user, default: []].append(submission.signedAppTransaction)
        }
        let purchases = (appTransactions[user] ?? []).map {
            AppPurchase(
                appTransactionID: $0, originalApplicationVersion: "1.0", originalPurchaseDate: nil,
                environment: "Sandbox")
        }
        return try json(AppPurchasesResponse(userID: user, purchases: purchases))
    }
    /// The promotional and win-back offers the catalog lists for each user (`offers` when asked with a token).
    private var offers: [String: [AvailableOffer]] = [:]
    func set(offers: [AvailableOffer], for user: String) { self.offers[user] = offers }
    private var subscriptions: [String: [UserSubscription]] = [:]

    /// An operator (or the buyer elsewhere) closes an unpaid order.
    func close(orderNo: String) { orders[orderNo]?.status = .closed }

    /// The providers' notifications arrive: every order a provider was paid for is fulfilled, whether or not an app
    /// ever asks about it again.
    func deliverProviderNotifications() {
        for orderNo in providerPaid.sorted() {
            if let order = orders[orderNo], order.status == .created {
                _ = fulfil(order, credit: "provider:\(orderNo)")
            }
        }
    }

    func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        let path = request.url!.path
        let method = request.httpMethod ?? "GET"
        await crash.step("server: \(method) \(Self.shape(path))")
        if offline { throw URLError(.notConnectedToInternet) }
        if unauthorized > 0, path.hasSuffix("client-result") {
            unauthorized -= 1
            return (401, Data(#"{"error":{"code":"unauthorized","message":"the token expired"}}"#.utf8))
        }
        if unauthorizedSubmissions > 0, path.hasSuffix("appstore/transactions") {
            unauthorizedSubmissions -= 1
            return (401, Data(#"{"error":{"code":"unauthorized","message":"the token expired"}}"#.utf8))
        }
        if unavailable > 0 {
            unavailable -= 1
            return (503, Data(#"{"error":{"code":"unavailable","message":"busy"}}"#.utf8))
        }
        if path.hasSuffix("appstore/transactions"), failingSubmissions > 0 {
            failingSubmissions -= 1
            return (503, Data(#"{"error":{"code":"unavailable","message":"busy"}}"#.utf8))
        }
        requests.append("\(method) \(path)")
        if path.hasSuffix("appstore/transactions"), submissionDelay > .zero {
            try await Task.sleep(for: submissionDelay)
        }
        if path.hasSuffix("me/entitlements"), entitlementsDelay > .zero { try await Task.sleep(for: entitlementsDelay) }
        // A token is its user's id, optionally with a version after `~` (a refreshed token of the same user).
        let user = request.value(forHTTPHeaderField: "Authorization").map {
            String($0.dropFirst(7).prefix { $0 != "~" })
        }
        if method == "GET", path == "/v1/me/orders" { return try history(request.url!, user: user) }
        if path == "/v1/appstore/app-transaction" {
            return try appPurchases(method: method, user: user, body: request.httpBody)
        }
        let answer = try answer(
            method: method, path: path, user: user, key: request.value(forHTTPHeaderField: "Idempotency-Key"),
            body: request.httpBody)
        await crash.step("server: answered \(method) \(Self.shape(path))")
        return answer
    }

    private func answer(method: String, path: String, user: String?, key: String?, body: Data?) throws -> (Int, Data) {
        let parts = path.split(separator: "/").map(String.init)
        switch (method, parts) {
        case ("GET", ["v1", "catalog"]):
            var answer = CatalogResponse(version: "test", products: Self.catalog)
            if let user {
                answer.introductoryOffers = [
                    IntroductoryOfferEligibility(
                        productID: "vip", eligible: !ineligible.contains(user),
                        signedEligibility: ineligible.contains(user) ? "eligibility.jws.\(user)" : nil)
                ]
                answer.offers = offers[user] ?? []
            }
            return try json(answer)
        case ("POST", let p) where p.count == 5 && p[1] == "appstore" && p[2] == "offers" && p[4] == "signature":
            guard let user else { return (401, Data()) }
            let request = try JSONDecoder().decode([String: String].self, from: body ?? Data())
            guard let order = orders[request["order_no"] ?? ""], order.userID == user else {
                return error(404, "order_not_found")
            }
            guard order.productID == "vip" else { return error(409, "offer_not_applicable") }
            return try json(
                AppStoreOfferSignature(
                    offerID: p[3], productID: "vip.ios", keyID: "KEY", nonce: order.orderUUID,
                    timestamp: 1_700_000_000_000,
                    signature: Data("sig".utf8).base64EncodedString(),
                    compactJWS: "offer.jws.\(order.orderNo)", appAccountToken: order.orderUUID))
        case ("POST", ["v1", "orders"]):
            guard let user else { return (401, Data()) }
            let request = try OrderSafeJSON.decoder().decode(CreateOrderRequest.self, from: body ?? Data())
            if let key, let existing = keys[key], let order = orders[existing] {
                return try json(response(order), status: 200)
            }
            sequence += 1
            let order = Order(
                orderNo: "OS-\(sequence)", orderUUID: UUID(), userID: user, productID: request.productID,
                channel: request.channel, status: .created,
                amount: Money(amountMinor: 600, currency: CurrencyCode("CNY")!), createdAt: Date(), updatedAt: Date())
            orders[order.orderNo] = order
            if let key { keys[key] = order.orderNo }
            return try json(response(order), status: 201)
        case ("GET", let p) where p.count == 3 && p[1] == "orders",
            ("POST", let p) where p.count == 4 && p[3] == "client-result":
            if p.count == 4, orders[p[2]] == nil, var lost = lostOrders[p[2]], providerPaid.contains(lost.orderNo),
                lost.userID == user,
                try OrderSafeJSON.decoder().decode(ClientResultRequest.self, from: body ?? Data()).channel
                    == lost.channel
            {
                lost.status = .created
                orders[lost.orderNo] = lost
            }
            guard var order = orders[p[2]], order.userID == user else { return error(404, "order_not_found") }
            if providerPaid.contains(order.orderNo), order.status == .created {
                order = fulfil(order, credit: "provider:\(order.orderNo)")
            }
            let unpaid = asksProvider && (order.status == .created || order.status == .paying)
            // Its payment's id on GET, as the server answers (a transaction id, or the provider's order).
            let paidBy = p.count == 3 ? credits.first { $0.value == order.orderNo }?.key : nil
            return try json(
                OrderResponse(
                    order: order, providerAnswer: unpaid ? .notPaid : nil,
                    providerTransactionID: paidBy.map { $0.hasPrefix("provider:") ? "trade-\(order.orderNo)" : $0 }))
        case ("POST", let p) where p.count == 4 && p[3] == "cancel":
            guard var order = orders[p[2]], order.userID == user else { return error(404, "order_not_found") }
            if providerPaid.contains(order.orderNo), order.status == .created {
                order = fulfil(order, credit: "provider:\(order.orderNo)")
            }
            guard order.status == .created || order.status == .cancelled, !refusesCancellation else {
                return error(409, "order_not_cancellable")
            }
            order.status = .cancelled
            orders[order.orderNo] = order
            return try json(OrderResponse(order: order))
        case ("POST", ["v1", "appstore", "transactions"]):
            guard let user else { return (401, Data()) }
            let submission = try OrderSafeJSON.decoder().decode(AppStoreSubmission.self, from: body ?? Data())
            let signed =
                try JSONSerialization.jsonObject(with: Data((submission.signedTransaction ?? "").utf8))
                as! [String: Any]
            let id = String(signed["id"] as! Int)
            if let submissionAnswer {
                let (status, text) = submissionAnswer(id)
                return (status, Data(text.utf8))
            }
            // As the server answers another account's submission: recorded for its owner, without the order
            // (`AppStorePayments.answer`: the order is not the submitter's to see).
            let seen = { (order: Order) in order.userID == user ? order : nil }
            if let credited = credits[id], let order = orders[credited] {
                return try json(
                    AppStoreSubmissionResponse(transactions: [
                        .init(transactionID: id, verdict: .recorded, order: seen(order))
                    ]))
            }
            var order = orders.values.first { $0.orderUUID.uuidString.lowercased() == signed["token"] as? String }
            if order == nil || order!.status.isFinal {
                // Adopted: a transaction for no order (or a cancelled one) still counts, for its owner.
                sequence += 1
                let adopted = Order(
                    orderNo: "OS-\(sequence)", orderUUID: UUID(), userID: order?.userID ?? user, productID: "coins",
                    channel: .appStore,
                    status: .created, amount: Money(amountMinor: 600, currency: CurrencyCode("CNY")!),
                    createdAt: Date(), updatedAt: Date())
                orders[adopted.orderNo] = adopted
                order = adopted
            }
            let fulfilled = fulfil(order!, credit: id)
            return try json(
                AppStoreSubmissionResponse(transactions: [
                    .init(transactionID: id, verdict: .recorded, order: seen(fulfilled))
                ]))
        case ("POST", ["v1", "appstore", "sync"]):
            // Restore: each transaction recorded (once) for its owner; another account's answered without its order.
            guard let user else { return (401, Data()) }
            let request = try OrderSafeJSON.decoder().decode(AppStoreSyncRequest.self, from: body ?? Data())
            let signedTransactions = request.signedTransactions ?? []
            guard signedTransactions.count <= 100 else { return error(400, "too_many_transactions") }
            syncRequests += 1
            var results: [AppStoreTransactionResult] = []
            for jws in signedTransactions {
                let signed = try JSONSerialization.jsonObject(with: Data(jws.utf8)) as! [String: Any]
                let id = String(signed["id"] as! Int)
                var order = credits[id].flatMap { orders[$0] }
                if order == nil {
                    sequence += 1
                    let adopted = Order(
                        orderNo: "OS-\(sequence)", orderUUID: UUID(), userID: user, productID: "coins",
                        channel: .appStore, status: .created,
                        amount: Money(amountMinor: 600, currency: CurrencyCode("CNY")!), createdAt: Date(),
                        updatedAt: Date())
                    orders[adopted.orderNo] = adopted
                    order = fulfil(adopted, credit: id)
                }
                results.append(
                    .init(transactionID: id, verdict: .recorded, order: order?.userID == user ? order : nil))
            }
            return try json(AppStoreSubmissionResponse(transactions: results))
        case ("GET", ["v1", "me", "subscriptions"]):
            guard let user else { return (401, Data()) }
            return try json(SubscriptionsResponse(userID: user, subscriptions: subscriptions[user] ?? []))
        case ("GET", ["v1", "me", "entitlements"]):
            guard let user else { return (401, Data()) }
            return try json(
                HoldingsResponse(
                    userID: user, balances: [Balance(name: "coins", amount: balances[user] ?? 0)], entitlements: []))
        default:
            return error(404, "not_found")
        }
    }

    private func fulfil(_ order: Order, credit: String) -> Order {
        var order = order
        if credits[credit] != nil { doubleCredits += 1 }
        credits[credit] = order.orderNo
        order.status = .fulfilled
        orders[order.orderNo] = order
        balances[order.userID, default: 0] += 60
        return order
    }

    private func response(_ order: Order) -> OrderResponse {
        OrderResponse(
            order: order,
            alipay: order.channel == .alipay ? AlipayInvocation(orderString: "out_trade_no=\(order.orderNo)") : nil,
            wechatpay: order.channel == .wechatPay
                ? WeChatPayInvocation(
                    appid: "wx1", partnerid: "19", prepayid: "prepay-\(order.orderNo)", package: "Sign=WXPay",
                    noncestr: "n", timestamp: "1795000000",
                    sign: "s")
                : nil)
    }

    /// `GET /v1/me/orders`: the user's orders, newest first, `limit` at a time after the `cursor` order.
    private func history(_ url: URL, user: String?) throws -> (Int, Data) {
        guard let user else { return error(401, "unauthorized") }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let limit = items.first { $0.name == "limit" }?.value.flatMap { Int($0) } ?? 20
        let cursor = items.first { $0.name == "cursor" }?.value
        let mine = orders.values.filter { $0.userID == user }.sorted {
            ($0.createdAt, $0.orderNo) > ($1.createdAt, $1.orderNo)
        }
        let start = cursor.flatMap { cursor in mine.firstIndex { $0.orderNo == cursor }.map { $0 + 1 } } ?? 0
        let page = Array(mine.dropFirst(start).prefix(limit))
        return try json(OrderHistoryResponse(orders: page, next: start + limit < mine.count ? page.last?.orderNo : nil))
    }

    private func json(_ value: some Encodable, status: Int = 200) throws -> (Int, Data) {
        (status, try OrderSafeJSON.encoder().encode(value))
    }

    private func error(_ status: Int, _ code: String) -> (Int, Data) {
        (status, Data(#"{"error":{"code":"\#(code)","message":"\#(code)"}}"#.utf8))
    }

    /// A path with its order number replaced, so crash step names are the same in every run.
    static func shape(_ path: String) -> String {
        path.split(separator: "/").map { $0.hasPrefix("OS-") ? "{order}" : String($0) }.joined(separator: "/")
    }

    static let catalog: [CatalogProduct] = [
        CatalogProduct(
            id: "coins", kind: .consumable, title: "Coins", appStoreProductID: "coins.ios", channels: [.appStore],
            prices: [.appStore: Money(amountMinor: 600, currency: CurrencyCode("CNY")!)], grants: []),
        CatalogProduct(
            id: "gift", kind: .consumable, title: "Gift", goods: .physical, channels: [.alipay, .wechatPay],
            prices: [
                .alipay: Money(amountMinor: 500, currency: CurrencyCode("CNY")!),
                .wechatPay: Money(amountMinor: 500, currency: CurrencyCode("CNY")!),
            ],
            grants: []),
        CatalogProduct(
            id: "vip", kind: .autoRenewableSubscription, title: "VIP", appStoreProductID: "vip.ios",
            channels: [.appStore], prices: [.appStore: Money(amountMinor: 2500, currency: CurrencyCode("CNY")!)],
            grants: [.extendEntitlement(entitlement: "vip", period: GrantPeriod(count: 1, unit: .month))],
            winBackOffers: ["WINBACK_1"], subscriptionGroup: "21000001"),
        CatalogProduct(
            id: "ghost", kind: .nonConsumable, title: "Not in the store", appStoreProductID: "unknown.ios",
            channels: [.appStore],
            prices: [.appStore: Money(amountMinor: 100, currency: CurrencyCode("CNY")!)], grants: []),
    ]
}

/// The Alipay and WeChat apps: they tell the fake server's provider that the order was paid (unless the user
/// cancels) and answer with the vendor's codes.
struct FakeVendorApps: AlipayBridge, WeChatPayBridge {
    let server: FakeServer
    let crash: CrashPoints
    var alipayStatus = "9000"
    var wechatCode: Int32 = 0

    func pay(orderString: String) async -> AlipayResult {
        await crash.step("alipay app: open")
        if alipayStatus == "9000" || alipayStatus == "8000" {
            await server.pay(orderNo: String(orderString.dropFirst("out_trade_no=".count)))
        }
        await crash.step("alipay app: paid")
        return AlipayResult(resultStatus: alipayStatus)
    }

    func pay(_ request: WeChatPayRequest) async -> WeChatPayResult {
        await crash.step("wechat app: open")
        if wechatCode == 0 { await server.pay(orderNo: String(request.prepayID.dropFirst("prepay-".count))) }
        await crash.step("wechat app: paid")
        return WeChatPayResult(errCode: wechatCode)
    }
}
