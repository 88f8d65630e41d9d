import Foundation
import HummingbirdTesting
import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// The offers `GET /v1/catalog` lists for the signed-in user are the ones the server signs for them: one rule
/// (audience, window after expiry, limit per user) for the paywall and for the signature.
@Suite("The offers listed for a user are the ones signed for them")
struct OfferListingTests {
    /// The offers the catalog lists for the holder of `token`, as `offer_id` (`*` marks one that asks the merchant).
    static func listed(_ client: some TestClientProtocol, token: String) async throws -> [String] {
        let answer = try await client.execute(uri: "/v1/catalog", method: .get, headers: TestServer.bearer(token))
            .decoded(CatalogResponse.self)
        return (answer.offers ?? []).map { ($0.asksMerchant ? "*" : "") + $0.offerID }
    }

    /// Every offer of vip_monthly the catalog names (but the one that asks the merchant, whom no hook answers here):
    /// whether the server signs it for the holder of `token` now.
    static func signable(_ client: some TestClientProtocol, token: String) async throws -> [String] {
        var signed: [String] = []
        for offer in ["FIRST_MONTH", "STAY_HALF_PRICE", "WINBACK_1"] {
            let order = try await OfferRuleTests.newOrder(client, token: token)
            let answer = try await OfferSignatureTests.sign(client, token: token, offer: offer, orderNo: order.orderNo)
            if answer.status == .ok { signed.append(offer) }
        }
        return signed
    }

    @Test("never subscribed, active, lapsed within the window, lapsed after taking the once-per-user offer")
    func listedIsSignable() async throws {
        try await SubscriptionQuarterTests.withAcceleratedStore { client, components, clock in
            let store = components.sandbox!.appStore
            let lifetime: TimeInterval = 200 * 86400
            let carol = try await TestServer.token("carol", issuedAt: clock.now(), lifetime: lifetime)
            #expect(try await Self.listed(client, token: carol) == ["FIRST_MONTH", "*SPRING_CAMPAIGN"])
            #expect(try await Self.signable(client, token: carol) == ["FIRST_MONTH"])

            let alice = try await TestServer.token("alice", issuedAt: clock.now(), lifetime: lifetime)
            let original = try await OfferRuleTests.lapsed(client, store, clock, token: alice)
            #expect(try await Self.listed(client, token: alice) == ["*SPRING_CAMPAIGN", "WINBACK_1"])
            #expect(try await Self.signable(client, token: alice) == ["WINBACK_1"])

            // She takes it: active again, the offers for subscribers now.
            let back = try await OfferRuleTests.newOrder(client, token: alice)
            #expect(
                try await OfferSignatureTests.sign(client, token: alice, offer: "WINBACK_1", orderNo: back.orderNo)
                    .status == .ok)
            let (_, notification) = try await store.resubscribe(
                original, to: OfferRuleTests.monthly, appAccountToken: back.orderUUID, offer: "WINBACK_1")
            #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            #expect(try await Self.listed(client, token: alice) == ["STAY_HALF_PRICE"])
            #expect(try await Self.signable(client, token: alice) == ["STAY_HALF_PRICE"])

            // It lapses again: the win-back offer is once per user, and she had it.
            clock.advance(by: 1)
            #expect(
                try await AppStoreFlowTests.notify(client, try await store.subscription(original, .autoRenew(false)))
                    == .ok)
            clock.advance(by: OfferRuleTests.month + 1)
            for payload in try await store.renewDue() {
                #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
            }
            #expect(try await Self.listed(client, token: alice) == ["*SPRING_CAMPAIGN"])
            #expect(try await Self.signable(client, token: alice) == [])

            // Anonymous: the catalog alone, cacheable, no offers.
            let anonymous = try await client.execute(uri: "/v1/catalog", method: .get).decoded(CatalogResponse.self)
            #expect(anonymous.offers == nil && anonymous.introductoryOffers == nil)
        }
    }

}
