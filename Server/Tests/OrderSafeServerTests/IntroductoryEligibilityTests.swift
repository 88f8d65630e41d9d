import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// `GET /v1/catalog` asked with a user's token: the user's introductory-offer eligibility per auto-renewable
/// product, across the product's subscription group, signed for StoreKit when the user has a transaction to name.
@Suite("Introductory-offer eligibility in the catalog answer")
struct IntroductoryEligibilityTests {
    static func catalog(_ client: some TestClientProtocol, token: String?) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/catalog", method: .get, headers: token.map { TestServer.bearer($0) } ?? [:])
    }

    /// The claims of a compact JWS (read, not verified: OfferSignatureTests verifies the signer's JWS).
    static func claims(_ jws: String) -> [String: Any]? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    @Test("eligible until the user subscribes in the group; public answers stay cacheable; a bad token is refused")
    func eligibility() async throws {
        try await TestServer.withComponents { client, components, _ in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 86400)

            let anonymous = try await Self.catalog(client, token: nil)
            #expect(anonymous.headers[.cacheControl] == "public, max-age=300")
            #expect(try anonymous.decoded(CatalogResponse.self).introductoryOffers == nil)

            let before = try await Self.catalog(client, token: alice)
            #expect(before.headers[.cacheControl] == "private, no-store")
            #expect(
                try before.decoded(CatalogResponse.self).introductoryOffers == [
                    .init(productID: "vip_monthly", eligible: true),
                    .init(productID: "vip_plus_monthly", eligible: true),
                ])

            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let (original, jws) = try await store.purchase(
                productID: "com.example.ordersafe.vip.monthly", type: "Auto-Renewable Subscription",
                appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let after = try #require(
                try await Self.catalog(client, token: alice).decoded(CatalogResponse.self).introductoryOffers)
            #expect(after.map(\.eligible) == [false, false], "the group counts, not only the product bought")
            for offer in after {
                let claims = try #require(offer.signedEligibility.flatMap(Self.claims))
                #expect(claims["allowIntroductoryOffer"] as? Bool == false)
                #expect(claims["aud"] as? String == "introductory-offer-eligibility")
                #expect(claims["transactionId"] as? String == original)
            }
            // Another user is not affected.
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let bobs = try await Self.catalog(client, token: bob).decoded(CatalogResponse.self).introductoryOffers
            #expect(bobs?.allSatisfy(\.eligible) == true)

            #expect(try await Self.catalog(client, token: "forged.token.here").status == .unauthorized)
        }
    }
}
