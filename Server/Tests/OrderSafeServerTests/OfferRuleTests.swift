import Engine
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Sandbox
import Synchronization
import Testing

@testable import OrderSafeServer

/// What the catalog's offer rules ask beyond the subscriber's state (`within_days`, `per_user`, `ask_merchant`), and
/// a purchase with an offer recorded at what the App Store charged, not at the catalog's price.
@Suite("Offers the merchant controls: window, limit and hook; the price the App Store charged")
struct OfferRuleTests {
    static let monthly = SubscriptionQuarterTests.monthly
    static let month = SubscriptionQuarterTests.month
    static let hookSecret = "offer-hook-secret-0123456789abcdef0123"

    /// `user` subscribes to VIP on the accelerated store, turns auto-renew off and lets the period end: the chain.
    static func lapsed(
        _ client: some TestClientProtocol, _ store: SandboxAppStore, _ clock: ManualClock, token: String
    ) async throws -> String {
        let order = try await TestServer.createOrder(client, token: token, product: "vip_monthly").decoded(
            OrderResponse.self
        ).order
        let (original, jws) = try await store.purchase(
            productID: monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
        #expect(try await AppStoreFlowTests.submit(client, token: token, jws: jws).verdict == .recorded)
        clock.advance(by: 1)
        #expect(
            try await AppStoreFlowTests.notify(client, try await store.subscription(original, .autoRenew(false))) == .ok
        )
        clock.advance(by: month + 1)
        for payload in try await store.renewDue() {
            #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
        }
        #expect(try await SubscriptionStateTests.subscriptions(client, token: token).first?.state == .expired)
        return original
    }

    static func newOrder(_ client: some TestClientProtocol, token: String) async throws -> Order {
        try await TestServer.createOrder(client, token: token, product: "vip_monthly").decoded(OrderResponse.self).order
    }

    @Test(
        "an offer's purchase is recorded at the offer's price and a storefront's at its currency, unflagged (the revenue counts it); the offer's counts follow",
        arguments: TestEngine.available)
    func recordedAtTheChargedPrice(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            let ledger = components.ledger
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let order = try await Self.newOrder(client, token: alice)
            #expect(order.amount == Money(amountMinor: 2500, currency: .cny), "the catalog's price")
            let signed = try await OfferSignatureTests.sign(
                client, token: alice, offer: "FIRST_MONTH", orderNo: order.orderNo)
            #expect(signed.status == .ok)
            let (id, jws) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID,
                promotionalOffer: "FIRST_MONTH")
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let offerPrice = Money(amountMinor: 600, currency: .cny)
            let paid = try #require(try await ledger.order(number: order.orderNo))
            #expect(paid.status == .fulfilled && paid.amount == offerPrice, "\(paid.status) \(paid.amount)")
            #expect(try await ledger.payment(channel: .appStore, providerTransactionID: id)?.amount == offerPrice)
            let detail = try await client.execute(
                uri: "/v1/admin/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(String(buffer: detail.body).contains("offer:promotional:FIRST_MONTH"))
            let counts = try await ledger.offerCounts()
            #expect(counts.first { $0.offer == "promotional:FIRST_MONTH" }.map { [$0.signed, $0.redeemed] } == [1, 1])
            // The console's Offers page: each listed offer with its rule, price and counts.
            let console = ConsoleClient(client)
            _ = try await console.signIn(TestServer.adminKey)
            let page = try await console.get("/admin/offers").html
            let row = ConsoleClient.firstMatch(#"(?s)<tr><td><code>FIRST_MONTH</code></td>(.*?)</tr>"#, in: page) ?? ""
            #expect(
                ConsoleClient.allMatches(#"<td[^>]*>([^<]*)</td>"#, in: row).suffix(4).prefix(3) == [
                    "CNY 6.00", "1", "1",
                ], "\(row)")
            let winBack =
                ConsoleClient.firstMatch(#"(?s)<tr><td><code>WINBACK_1</code></td>(.*?)</tr>"#, in: page) ?? ""
            #expect(winBack.contains("within 90 days of expiry, 1 per user"), "\(winBack)")

            // A buyer in another storefront: the App Store charges its price in its currency; so is it recorded.
            await store.setPrices(["com.example.ordersafe.coins60": Money(amountMinor: 99, currency: .usd)])
            let coins = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (coinsID, coinsJWS) = try await store.purchase(
                productID: "com.example.ordersafe.coins60", appAccountToken: coins.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: coinsJWS).verdict == .recorded)
            let storefront = try #require(try await ledger.order(number: coins.orderNo))
            #expect(storefront.status == .fulfilled && storefront.amount == Money(amountMinor: 99, currency: .usd))
            #expect(
                try await ledger.payment(channel: .appStore, providerTransactionID: coinsID)?.amount
                    == storefront.amount)

        }
    }

    @Test("the App Store's statement of the day agrees with a purchase made at an offer's price: matched, not flagged")
    func statementAgrees() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            let day = StatementDay(containing: clock.now(), utcOffset: 0)
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let order = try await Self.newOrder(client, token: alice)
            #expect(
                try await OfferSignatureTests.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: order.orderNo)
                    .status == .ok)
            let (_, jws) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID,
                promotionalOffer: "FIRST_MONTH")
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            StatementReconciliationTests.nextMorning(clock, utcOffset: 0)
            let report = try await components.statements.reconcile(.appStore, day: day)
            #expect(report.flagged.count == 0 && report.discrepancies.isEmpty, "\(report.discrepancies)")
            #expect(report.matched.count == 1 && report.matched.amountMinor == ["CNY": 600], "\(report.matched)")
        }
    }

    @Test(
        "a win-back offer only within its window after expiry, and as many times per user as its rule allows",
        arguments: TestEngine.available)
    func windowAndLimit(engine: TestEngine) async throws {
        try await SubscriptionQuarterTests.withAcceleratedStore(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            let lifetime: TimeInterval = 200 * 86400

            // Bob's subscription ended more than the window's 90 days ago: not listed, not signed.
            let bob = try await TestServer.token("bob", issuedAt: clock.now(), lifetime: lifetime)
            _ = try await Self.lapsed(client, store, clock, token: bob)
            clock.advance(by: 91 * 86400)
            #expect(try await SubscriptionStateTests.subscriptions(client, token: bob).first?.winBackOffers == nil)
            let late = try await OfferSignatureTests.sign(
                client, token: bob, offer: "WINBACK_1", orderNo: try await Self.newOrder(client, token: bob).orderNo)
            #expect(try late.status == .conflict && late.errorCode() == "offer_not_eligible")
            #expect(String(buffer: late.body).contains("within the last 90 days"))

            // Alice's ended just now: listed, signed, taken at the offer's price.
            let alice = try await TestServer.token("alice", issuedAt: clock.now(), lifetime: lifetime)
            let original = try await Self.lapsed(client, store, clock, token: alice)
            #expect(
                try await SubscriptionStateTests.subscriptions(client, token: alice).first?.winBackOffers == [
                    "WINBACK_1"
                ])
            let back = try await Self.newOrder(client, token: alice)
            #expect(
                try await OfferSignatureTests.sign(client, token: alice, offer: "WINBACK_1", orderNo: back.orderNo)
                    .status == .ok)
            let (_, notification) = try await store.resubscribe(
                original, to: Self.monthly, appAccountToken: back.orderUUID, offer: "WINBACK_1")
            #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            let taken = try #require(try await components.ledger.order(number: back.orderNo))
            #expect(taken.status == .fulfilled && taken.amount == Money(amountMinor: 1200, currency: .cny))

            // It lapses again: the offer is once per user, and she had it.
            clock.advance(by: 1)
            #expect(
                try await AppStoreFlowTests.notify(client, try await store.subscription(original, .autoRenew(false)))
                    == .ok)
            clock.advance(by: Self.month + 1)
            for payload in try await store.renewDue() {
                #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
            }
            let again = try await OfferSignatureTests.sign(
                client, token: alice, offer: "WINBACK_1", orderNo: try await Self.newOrder(client, token: alice).orderNo
            )
            #expect(try again.status == .conflict && again.errorCode() == "offer_not_eligible")
            #expect(String(buffer: again.body).contains("1 time per user"), "\(String(buffer: again.body))")
        }
    }

    /// The merchant's backend: checks each question's signature, answers as `mode` says (`yes`, `no`, `garbled`,
    /// `silent`: not before `released`, long after the hook gave up), and keeps the questions.
    final class MerchantBackend: Sendable {
        let mode = Mutex("yes")
        let released = Mutex(false)
        let questions = Mutex<[String]>([])

        var router: Router<BasicRequestContext> {
            let router = Router()
            router.post("offers") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 4096)
                let bytes = Array(buffer: body)
                #expect(
                    WebhookSignature.verify(
                        header: request.headers[HTTPField.Name(WebhookSignature.headerName)!] ?? "", body: bytes,
                        secret: OfferRuleTests.hookSecret, now: TestServer.now))
                self.questions.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) }
                let answer: (HTTPResponse.Status, String)
                switch self.mode.withLock({ $0 }) {
                case "no": answer = (.ok, #"{"allow": false}"#)
                case "garbled": answer = (.ok, #"{"allowed": "yes"}"#)
                case "silent":
                    for _ in 0..<600 where !self.released.withLock({ $0 }) {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    answer = (.ok, #"{"allow": true}"#)
                default: answer = (.ok, #"{"allow": true}"#)
                }
                return Response(status: answer.0, body: .init(byteBuffer: ByteBuffer(string: answer.1)))
            }
            return router
        }
    }

    @Test("an offer that asks the merchant is signed on its yes; refused on its no, a garbled answer or silence")
    func merchantHook() async throws {
        let backend = MerchantBackend()
        let app = Application(router: backend.router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { hookClient in
            let port = try #require(hookClient.port)
            try await TestServer.withComponents(extra: [
                "ORDERSAFE_OFFER_HOOK_URL": "http://127.0.0.1:\(port)/offers",
                "ORDERSAFE_OFFER_HOOK_SECRET": Self.hookSecret, "ORDERSAFE_OFFER_HOOK_TIMEOUT_MS": "8000",
            ]) { client, _, _ in
                let alice = try await TestServer.token("alice", lifetime: 86400)
                let order = try await Self.newOrder(client, token: alice)
                let yes = try await OfferSignatureTests.sign(
                    client, token: alice, offer: "SPRING_CAMPAIGN", orderNo: order.orderNo)
                #expect(yes.status == .ok, "\(String(buffer: yes.body))")
                // A silent backend answers yes only once released, after the refusal: only the hook's timeout can
                // have ended the wait (on a loaded machine a wall clock proves nothing).
                for mode in ["no", "garbled", "silent"] {
                    backend.mode.withLock { $0 = mode }
                    let refused = try await OfferSignatureTests.sign(
                        client, token: alice, offer: "SPRING_CAMPAIGN", orderNo: order.orderNo)
                    #expect(try refused.status == .conflict && refused.errorCode() == "offer_not_eligible", "\(mode)")
                }
                backend.released.withLock { $0 = true }
                let questions = backend.questions.withLock { $0 }
                #expect(questions.count == 4)
                #expect(
                    questions.allSatisfy {
                        $0.contains(#""offer_id": "SPRING_CAMPAIGN""#) && $0.contains(#""user_id": "alice""#)
                            && $0.contains(#""audience": "never_subscribed""#)
                    }, "\(questions)")
                let timeline = try await client.execute(
                    uri: "/v1/admin/orders/\(order.orderNo)", method: .get,
                    headers: TestServer.bearer(TestServer.adminKey))
                let signedEvents = String(buffer: timeline.body).components(separatedBy: #""kind":"offer_signed""#)
                #expect(signedEvents.count - 1 == 1, "only the yes is signed")
                #expect(String(buffer: timeline.body).contains("rule:merchant decides"))
            }
        }
        // No hook configured: such an offer cannot be signed, and says why.
        try await TestServer.withComponents { client, _, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let order = try await Self.newOrder(client, token: alice)
            let refused = try await OfferSignatureTests.sign(
                client, token: alice, offer: "SPRING_CAMPAIGN", orderNo: order.orderNo)
            #expect(try refused.status == .serviceUnavailable && refused.errorCode() == "offers_unavailable")
            #expect(String(buffer: refused.body).contains("offer_hook.url"))
        }
    }
}
