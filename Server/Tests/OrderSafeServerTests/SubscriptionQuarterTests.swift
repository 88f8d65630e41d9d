import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// A subscription's quarter on the sandbox App Store's accelerated clock (a month in five minutes, as Apple's
/// sandbox): bought, renewed by the store's billing run (one notification lost, found by the history pull), billing
/// failing into a grace period and recovering, auto-renew off, expiry, a win-back offer taken, an upgrade, a refund.
/// After each step: the state `GET /v1/me/subscriptions` answers, the entitlement, and the merchant's webhooks.
@Suite("A subscription's quarter on the sandbox App Store's accelerated clock")
struct SubscriptionQuarterTests {
    static let monthly = "com.example.ordersafe.vip.monthly"
    static let plus = "com.example.ordersafe.vip.plus.monthly"
    static let month: TimeInterval = 300

    struct Detail: Decodable {
        struct Webhook: Decodable { var type: String }
        var webhooks: [Webhook]
    }

    /// The `subscription.updated` webhooks queued for the orders of `transactions`, in all.
    static func subscriptionWebhooks(
        _ client: some TestClientProtocol, _ components: OrderSafeComponents, transactions: Set<String>
    ) async throws -> Int {
        var orders = Set<String>()
        for id in transactions {
            if let payment = try await components.ledger.payment(channel: .appStore, providerTransactionID: id) {
                orders.insert(payment.orderNo)
            }
        }
        var count = 0
        for orderNo in orders {
            let detail = try await client.execute(
                uri: "/v1/admin/orders/\(orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey)
            ).decoded(Detail.self)
            count += detail.webhooks.filter { $0.type == "subscription.updated" }.count
        }
        return count
    }

    /// The console overview's row of subscribers by group: group, active, in grace, billing retry, churned.
    static func groupCounts(_ console: ConsoleClient) async throws -> [String] {
        let page = try await console.get("/admin")
        let table = ConsoleClient.firstMatch(
            #"(?s)<table class="compact" id="subscription-groups">(.*?)</table>"#, in: page.html)
        return ConsoleClient.allMatches(#"<td[^>]*>([^<]*)</td>"#, in: table ?? "")
    }

    /// A server whose sandbox App Store runs Apple's sandbox clock (a month in five minutes).
    static func withAcceleratedStore(
        engine: TestEngine = .sqlite,
        _ body: @escaping @Sendable (any TestClientProtocol, OrderSafeComponents, ManualClock) async throws -> Void
    ) async throws {
        try await TestServer.withComponents(
            engine: engine,
            extra: TestServer.webhookEndpoint.merging(
                ["ORDERSAFE_SERVER_SANDBOX_RENEWAL_RATE": "monthly_every_5_minutes"]) { $1 }, body)
    }

    static func entitlement(_ client: some TestClientProtocol, token: String, _ name: String) async throws -> Bool {
        let holdings = try await client.execute(
            uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
        return try holdings.decoded(HoldingsResponse.self).entitlements.first { $0.name == name }?.active == true
    }

    @Test(
        "renewals, a lost notification, grace and recovery, expiry, a win-back, an upgrade and a refund",
        arguments: TestEngine.available)
    func quarter(engine: TestEngine) async throws {
        try await Self.withAcceleratedStore(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 86400)
            var transactions = Set<String>()
            var announced = 0
            func state() async throws -> UserSubscription {
                try #require(try await SubscriptionStateTests.subscriptions(client, token: alice).first)
            }
            func deliver(_ payloads: [String]) async throws {
                for payload in payloads { #expect(try await AppStoreFlowTests.notify(client, payload) == .ok) }
            }
            /// Whether this step announced a change to the merchant (one more `subscription.updated`).
            func announcedOnce() async throws -> Bool {
                let now = try await Self.subscriptionWebhooks(client, components, transactions: transactions)
                defer { announced = now }
                #expect(now == announced + 1, "subscription.updated webhooks: \(announced) before, \(now) now")
                return now == announced + 1
            }

            // Bought in the app: five minutes of VIP.
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let (original, first) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
            transactions.insert(original)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: first).verdict == .recorded)
            var now = try await state()
            #expect(now.state == .active && now.productID == Self.monthly && now.autoRenew == nil, "the app's word")
            #expect(try await announcedOnce(), "the chain gained its owner")
            try await deliver([try #require(await store.latestNotification)])
            now = try await state()
            #expect(now.state == .active && now.autoRenew == true, "the notification's renewal information")
            #expect(try await Self.entitlement(client, token: alice, "vip"))
            #expect(try await announcedOnce())

            // Nothing is due before the period ends.
            clock.advance(by: Self.month - 10)
            #expect(try await store.renewDue().isEmpty)

            // The first renewal: its notification is lost; the history pull finds it.
            clock.advance(by: 20)
            let lost = try await store.renewDue()
            #expect(lost.count == 1)
            _ = try await components.runner.runDue()
            now = try await state()
            #expect(now.state == .active && now.lastTransactionID != original, "\(now)")
            transactions.insert(now.lastTransactionID)
            #expect(try await Self.entitlement(client, token: alice, "vip"))
            #expect(try await announcedOnce(), "a renewal is a change: its new expiry")
            let secondPeriodEnds = try #require(now.expiresAt)
            #expect(
                abs(secondPeriodEnds.timeIntervalSince(clock.now()) - (Self.month - 10)) < 2, "on time: from the end")

            // The second renewal, delivered.
            clock.advance(by: Self.month)
            try await deliver(try await store.renewDue())
            now = try await state()
            #expect(now.state == .active && now.expiresAt.map { $0 > secondPeriodEnds } == true)
            transactions.insert(now.lastTransactionID)
            #expect(try await announcedOnce())

            // The card expires: the third billing fails into a 16-day grace period (160 s here), and recovers.
            try await store.failNextBilling(original, graceDays: 16)
            clock.advance(by: Self.month)
            let failed = try await store.renewDue()
            #expect(failed.count == 1)
            try await deliver(failed)
            now = try await state()
            #expect(now.state == .inGracePeriod && now.gracePeriodEndsAt != nil, "\(now)")
            #expect(try await Self.entitlement(client, token: alice, "vip"), "access is kept through the grace period")
            #expect(try await announcedOnce())
            let console = ConsoleClient(client)
            _ = try await console.signIn(TestServer.adminKey)
            let graceCounts = try await Self.groupCounts(console)
            #expect(graceCounts == ["21000001", "0", "1", "0", "0"], "one in grace: \(graceCounts)")
            clock.advance(by: 60)
            try await deliver([try await store.recoverBilling(original)])
            now = try await state()
            #expect(now.state == .active && now.gracePeriodEndsAt == nil, "\(now)")
            transactions.insert(now.lastTransactionID)
            #expect(try await Self.entitlement(client, token: alice, "vip"))
            #expect(try await announcedOnce())

            // Auto-renew off; at the period's end the billing run expires it: voluntary, no VIP, a win-back offer.
            clock.advance(by: 1)  // Apple's signatures are milliseconds apart at least; so are these
            try await deliver([try await store.subscription(original, .autoRenew(false))])
            #expect(try await state().autoRenew == false)
            #expect(try await announcedOnce())
            clock.advance(by: Self.month + 1)
            try await deliver(try await store.renewDue())
            now = try await state()
            #expect(now.state == .expired && now.expirationReason == .voluntary, "\(now)")
            #expect(now.winBackOffers == ["WINBACK_1"])
            #expect(!(try await Self.entitlement(client, token: alice, "vip")))
            #expect(try await announcedOnce())
            #expect(try await store.renewDue().isEmpty, "an expired subscription is billed no more")

            // The win-back: the server signs the offer for a new order; the App Store takes it; the app records it.
            let back = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let signature = try await OfferSignatureTests.sign(
                client, token: alice, offer: "WINBACK_1", orderNo: back.orderNo)
            #expect(await store.acceptsOffer(try signature.decoded(AppStoreOfferSignature.self)))
            let (resubscribed, notification) = try await store.resubscribe(
                original, to: Self.monthly, appAccountToken: back.orderUUID)
            transactions.insert(resubscribed)
            try await deliver([notification])
            now = try await state()
            #expect(now.state == .active && now.lastTransactionID == resubscribed && now.winBackOffers == nil)
            #expect(try await components.ledger.order(number: back.orderNo)?.status == .fulfilled)
            #expect(try await Self.entitlement(client, token: alice, "vip"))
            #expect(try await announcedOnce())

            // An upgrade to VIP+: at once, a new period; the server credits it to the chain's owner.
            clock.advance(by: 100)
            try await deliver([try await store.upgrade(original, to: Self.plus)])
            now = try await state()
            #expect(now.state == .active && now.productID == Self.plus, "\(now)")
            #expect(abs((now.expiresAt ?? .distantPast).timeIntervalSince(clock.now()) - Self.month) < 2)
            transactions.insert(now.lastTransactionID)
            #expect(try await Self.entitlement(client, token: alice, "vip_plus"))
            #expect(try await announcedOnce())

            // Apple refunds the VIP+ period: revoked, no VIP+.
            let upgraded = now.lastTransactionID
            clock.advance(by: 1)
            try await store.refund(transactionID: upgraded)
            try await deliver([try #require(await store.latestNotification)])
            now = try await state()
            #expect(now.state == .revoked, "\(now)")
            #expect(!(try await Self.entitlement(client, token: alice, "vip_plus")))
            #expect(try await announcedOnce())
            #expect(try await Self.groupCounts(console) == ["21000001", "0", "0", "0", "1"], "churned: refunded")
            // The user page links the subscription's timeline: every period's order, each change, in order.
            let user = try await console.get("/admin/users/alice")
            let link = try #require(ConsoleClient.firstMatch(#"href="(/admin/subscriptions/[0-9]+)""#, in: user.html))
            let timeline = try await console.get(link)
            #expect(timeline.status == .ok)
            let kinds = ConsoleClient.allMatches(#"<td>(subscription:[a-z_]+)</td>"#, in: timeline.html)
            #expect(kinds.first == "subscription:active" && kinds.last == "subscription:revoked", "\(kinds)")
            #expect(kinds.contains("subscription:in_grace_period") && kinds.contains("subscription:expired"))
            #expect(try await console.get("/admin/subscriptions/999").status == .notFound)
            clock.advance(by: Self.month * 2)
            #expect(try await store.renewDue().isEmpty, "a refunded subscription renews no more")
        }
    }

    @Test("billing that never recovers: the grace period ends once, then the retry period, expired for billing")
    func billingNeverRecovers() async throws {
        try await Self.withAcceleratedStore { client, components, clock in
            let store = components.sandbox!.appStore
            // Every notification the store makes is posted once, as Apple's sandbox does; here to a list.
            let posted = Posted()
            await store.setNotificationSink { body in
                await posted.append(body)
                return true
            }
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let (original, first) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription")
            #expect(try await AppStoreFlowTests.submit(client, token: bob, jws: first).verdict == .recorded)
            try await store.failNextBilling(original, graceDays: 6)  // a minute here
            clock.advance(by: Self.month)
            for run in 0..<3 {
                for payload in try await store.renewDue() {
                    #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
                }
                let now = try #require(try await SubscriptionStateTests.subscriptions(client, token: bob).first)
                #expect(now.state == (run == 0 ? .inGracePeriod : .inBillingRetry), "run \(run): \(now)")
                #expect(try await Self.entitlement(client, token: bob, "vip") == (run == 0))
                clock.advance(by: 61)
            }
            clock.advance(by: 600)  // Apple's 60-day billing retry period
            let expiry = try await store.renewDue()
            #expect(expiry.count == 1)
            for payload in expiry { #expect(try await AppStoreFlowTests.notify(client, payload) == .ok) }
            let now = try #require(try await SubscriptionStateTests.subscriptions(client, token: bob).first)
            #expect(now.state == .expired && now.expirationReason == .billingError, "\(now)")
            #expect(try await store.renewDue().isEmpty)
            // SUBSCRIBED, DID_FAIL_TO_RENEW, GRACE_PERIOD_EXPIRED once, EXPIRED: each posted once.
            try await Task.sleep(for: .milliseconds(200))
            let types = await posted.bodies.map { body in
                let payload = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: String]
                return payload?["signedPayload"].flatMap(Self.notificationType) ?? "?"
            }
            #expect(types.sorted() == ["DID_FAIL_TO_RENEW", "EXPIRED", "GRACE_PERIOD_EXPIRED", "SUBSCRIBED"])
        }
    }

    actor Posted {
        var bodies: [String] = []
        func append(_ body: String) { bodies.append(body) }
    }

    /// The `notificationType` of a signed notification (its payload read without verification: the test's own).
    static func notificationType(_ jws: String) -> String? {
        IntroductoryEligibilityTests.claims(jws)?["notificationType"] as? String
    }

    @Test("an offer code redeemed in the App Store: its notification waits; the user whose app reports it owns it")
    func offerCodeRedemption() async throws {
        try await TestServer.withComponents { client, components, _ in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let bob = try await TestServer.token("bob", lifetime: 86400)
            // Redeemed outside the app: no order, no appAccountToken; Apple announces it before any app runs.
            let (original, jws) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", offerCode: "SPRING2026")
            let notification = try #require(await store.latestNotification)
            #expect(Self.notificationType(notification) == "OFFER_REDEEMED")
            #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            #expect(try await components.ledger.payment(channel: .appStore, providerTransactionID: original) == nil)
            #expect(try await SubscriptionStateTests.subscriptions(client, token: alice) == [])

            // Alice's app finds it in StoreKit's updates and reports it: hers, once, with her VIP.
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let payment = try #require(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: original))
            #expect(payment.userID == "alice")
            #expect(try await SubscriptionStateTests.subscriptions(client, token: alice).first?.state == .active)
            #expect(try await Self.entitlement(client, token: alice, "vip"))
            // Redelivered, or reported by another user's app: still Alice's, credited once.
            #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            _ = try await AppStoreFlowTests.submit(client, token: bob, jws: jws)
            #expect(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: original)?.userID
                    == "alice")
            #expect(!(try await Self.entitlement(client, token: bob, "vip")))
        }
    }

    @Test("a downgrade takes effect at the next renewal; the history lists each period, to its owner only")
    func downgradeAndHistory() async throws {
        try await Self.withAcceleratedStore { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_plus_monthly").decoded(
                OrderResponse.self
            ).order
            let (original, jws) = try await store.purchase(
                productID: Self.plus, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            clock.advance(by: 60)
            let downgrade = try await store.subscription(original, .renewsTo(Self.monthly))
            #expect(Self.notificationType(downgrade) == "DID_CHANGE_RENEWAL_PREF")
            #expect(try await AppStoreFlowTests.notify(client, downgrade) == .ok)
            var now = try #require(try await SubscriptionStateTests.subscriptions(client, token: alice).first)
            #expect(now.productID == Self.plus && now.renewalProductID == Self.monthly, "\(now)")
            #expect(try await Self.entitlement(client, token: alice, "vip_plus"), "VIP+ until the period ends")

            clock.advance(by: Self.month)
            for payload in try await store.renewDue() {
                #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
            }
            now = try #require(try await SubscriptionStateTests.subscriptions(client, token: alice).first)
            #expect(now.state == .active && now.productID == Self.monthly, "\(now)")
            #expect(!(try await Self.entitlement(client, token: alice, "vip_plus")))
            #expect(try await Self.entitlement(client, token: alice, "vip"))

            #expect(now.history == "/v1/me/subscriptions/\(original)/history")
            let history = try await client.execute(uri: now.history, method: .get, headers: TestServer.bearer(alice))
            let periods = try history.decoded(SubscriptionHistoryResponse.self).periods
            #expect(periods.map(\.productID) == [Self.plus, Self.monthly])
            #expect(periods.first?.transactionID == original && periods.allSatisfy { !$0.upgraded })
            let stranger = try await client.execute(uri: now.history, method: .get, headers: TestServer.bearer(bob))
            #expect(stranger.status == .notFound && String(buffer: stranger.body).contains("subscription_not_found"))
        }
    }
}
