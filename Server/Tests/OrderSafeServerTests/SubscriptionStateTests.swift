import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// A subscription's life as the sandbox App Store signs it — bought, auto-renew turned off and on, billing failing
/// into a grace period, recovered — delivered as notifications in Apple's order, reversed and shuffled, before and
/// after the app submits its first transaction: `GET /v1/me/subscriptions` tells one story on each engine.
@Suite("Subscription state over HTTP: signed notifications in any order")
struct SubscriptionStateTests {
    static let monthly = SubscriptionChainTests.monthly
    static let subscription = "Auto-Renewable Subscription"

    enum Arrival: String, CaseIterable, Sendable {
        case apple, reversed, shuffled
    }

    static let cases: [(TestEngine, Arrival)] = TestEngine.available.flatMap { engine in
        Arrival.allCases.map { (engine, $0) }
    }

    static func subscriptions(_ client: some TestClientProtocol, token: String) async throws -> [UserSubscription] {
        let response = try await client.execute(
            uri: "/v1/me/subscriptions", method: .get, headers: TestServer.bearer(token))
        #expect(response.status == .ok)
        return try response.decoded(SubscriptionsResponse.self).subscriptions
    }

    @Test("grace period, then recovery: one state whatever the order of arrival", arguments: cases)
    func graceThenRecovery(engine: TestEngine, arrival: Arrival) async throws {
        try await TestServer.withComponents(engine: engine, extra: TestServer.webhookEndpoint) {
            client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 90 * 86400)
            let day: TimeInterval = 86400
            let (original, first) = try await store.purchase(productID: Self.monthly, type: Self.subscription)
            let ends = Date(millisecondsSince1970: try SubscriptionChainTests.expiresDate(first))
            func renewal(_ fields: [String: any Sendable] = [:]) async throws -> String {
                try await store.renewalInfo(originalTransactionID: original, productID: Self.monthly, fields)
            }
            var notifications = [
                try await store.notification(
                    type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedTransaction: first,
                    signedRenewalInfo: try await renewal())
            ]
            clock.advance(by: 10 * day)
            notifications.append(
                try await store.notification(
                    type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signedTransaction: first,
                    signedRenewalInfo: try await renewal(["autoRenewStatus": 0])))
            clock.advance(by: 5 * day)
            notifications.append(
                try await store.notification(
                    type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", signedTransaction: first,
                    signedRenewalInfo: try await renewal()))
            clock.advance(by: ends.timeIntervalSince(clock.now()) + 60)
            let graceEnds = ends.addingTimeInterval(16 * day)
            let graceRenewal = try await renewal([
                "isInBillingRetryPeriod": true, "gracePeriodExpiresDate": graceEnds.millisecondsSince1970,
            ])
            notifications.append(
                try await store.notification(
                    type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signedTransaction: first,
                    signedRenewalInfo: graceRenewal))
            clock.advance(by: 3 * day)
            var ordered = notifications
            switch arrival {
            case .apple: break
            case .reversed: ordered.reverse()
            case .shuffled:
                var random = SeededRandom(state: 41)
                ordered.shuffle(using: &random)
            }
            for notification in ordered {
                #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            }
            // Signals kept before the chain had an owner count once it has one.
            #expect(try await Self.subscriptions(client, token: alice) == [])
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: first).verdict == .recorded)
            let grace = try #require(try await Self.subscriptions(client, token: alice).first)
            #expect(grace.state == .inGracePeriod, "\(arrival): \(grace)")
            #expect(grace.gracePeriodEndsAt == Date(millisecondsSince1970: graceEnds.millisecondsSince1970))
            #expect(grace.autoRenew == true && grace.productID == Self.monthly)
            #expect(grace.groupID == "21000001" && grace.originalTransactionID == original)

            // Billing recovers: the renewal and the renewal information that says so, delivered before or after the
            // failure they follow.
            let (renewed, renewedJWS) = try await store.purchase(
                productID: Self.monthly, type: Self.subscription, originalTransactionID: original)
            let recovery = try await store.notification(
                type: "DID_RENEW", subtype: "BILLING_RECOVERY", signedTransaction: renewedJWS,
                signedRenewalInfo: try await renewal(["isInBillingRetryPeriod": false]))
            #expect(try await AppStoreFlowTests.notify(client, recovery) == .ok)
            // The failure again, in a notification of its own (a retry Apple signed anew): older than the recovery.
            let late = try await store.notification(
                type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signedTransaction: first,
                signedRenewalInfo: graceRenewal)
            #expect(try await AppStoreFlowTests.notify(client, late) == .ok)
            let active = try #require(try await Self.subscriptions(client, token: alice).first)
            #expect(active.state == .active, "\(arrival): \(active)")
            #expect(active.lastTransactionID == renewed)
            #expect(active.gracePeriodEndsAt == nil)
            // The change is on the timeline of the renewal's order, and a webhook tells the merchant; the failure
            // delivered again after it changed nothing, and announced nothing.
            let payment = try #require(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: renewed))
            struct Detail: Decodable {
                struct Event: Decodable { var kind: String }
                struct Webhook: Decodable { var type: String }
                var events: [Event]
                var webhooks: [Webhook]
            }
            let detail = try await client.execute(
                uri: "/v1/admin/orders/\(payment.orderNo)", method: .get,
                headers: TestServer.bearer(TestServer.adminKey)
            ).decoded(Detail.self)
            #expect(detail.events.map(\.kind).filter { $0.hasPrefix("subscription:") } == ["subscription:active"])
            #expect(detail.webhooks.map(\.type).filter { $0.hasPrefix("subscription.") } == ["subscription.updated"])
            let admin = try await client.execute(
                uri: "/v1/admin/users/alice/subscriptions", method: .get,
                headers: TestServer.bearer(TestServer.adminKey))
            #expect(try admin.decoded(SubscriptionsResponse.self).subscriptions == [active])
            // The console's user page shows it too.
            let browser = ConsoleClient(client)
            _ = try await browser.signIn(TestServer.adminKey)
            let page = try await browser.get("/admin/users/alice")
            let row = ConsoleClient.firstMatch(
                #"<table class="compact" id="subscriptions">(.*?)</table>"#, in: page.html)
            #expect(row?.contains(Self.monthly) == true && row?.contains(">active<") == true, "\(row ?? page.html)")
        }
    }
}

extension SubscriptionStateTests {
    /// `POST /sandbox/appstore/subscriptions/{original}/events`, then what it answered delivered as Apple would POST
    /// it; the event's status.
    static func event(_ client: some TestClientProtocol, _ original: String, _ body: String) async throws
        -> HTTPResponse.Status
    {
        let response = try await client.execute(
            uri: "/sandbox/appstore/subscriptions/\(original)/events", method: .post, body: ByteBuffer(string: body))
        let object = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
        if let payload = object?["signed_payload"] as? String {
            #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
        }
        return response.status
    }

    @Test(
        "the sandbox App Store's subscription events (auto-renew off, billing failing, expiry) move the state",
        arguments: TestEngine.available)
    func sandboxEvents(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 200 * 86400)
            let bob = try await TestServer.token("bob", lifetime: 200 * 86400)
            let (lapsing, first) = try await store.purchase(productID: Self.monthly, type: Self.subscription)
            let (failing, second) = try await store.purchase(productID: Self.monthly, type: Self.subscription)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: first).verdict == .recorded)
            #expect(try await AppStoreFlowTests.submit(client, token: bob, jws: second).verdict == .recorded)

            #expect(try await Self.event(client, lapsing, #"{"event":"auto_renew_off"}"#) == .ok)
            let off = try #require(try await Self.subscriptions(client, token: alice).first)
            #expect(off.state == .active && off.autoRenew == false)
            #expect(try await Self.event(client, lapsing, #"{"event":"expires"}"#) == .badRequest, "not due yet")
            #expect(try await Self.event(client, failing, #"{"event":"billing_fails"}"#) == .badRequest, "not due")

            clock.advance(by: 32 * 86400)
            #expect(try await Self.event(client, lapsing, #"{"event":"expires"}"#) == .ok)
            let lapsed = try #require(try await Self.subscriptions(client, token: alice).first)
            #expect(lapsed.state == .expired && lapsed.expirationReason == .voluntary)

            // Its period ended, but it renews: it cannot expire; its billing can fail.
            #expect(try await Self.event(client, failing, #"{"event":"expires"}"#) == .badRequest, "it still renews")
            #expect(try await Self.event(client, failing, #"{"event":"billing_fails","grace_days":16}"#) == .ok)
            #expect(try await Self.subscriptions(client, token: bob).first?.state == .inGracePeriod)
            clock.advance(by: 20 * 86400)
            #expect(try await Self.subscriptions(client, token: bob).first?.state == .inBillingRetry)
            #expect(try await Self.event(client, failing, #"{"event":"expires"}"#) == .ok)
            let failed = try #require(try await Self.subscriptions(client, token: bob).first)
            #expect(failed.state == .expired && failed.expirationReason == .billingError)
            #expect(try await Self.event(client, failing, #"{"event":"pause"}"#) == .badRequest)
            #expect(try await Self.event(client, "404", #"{"event":"auto_renew_on"}"#) == .badRequest)
        }
    }
}
