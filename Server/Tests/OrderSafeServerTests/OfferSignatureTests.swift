import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OrderSafeModel
import Testing

@testable import Engine
@testable import OrderSafeServer

/// `POST /v1/appstore/offers/{offer_id}/signature`: a promotional offer signed for the user's own unpaid order of a
/// subscription, bound to it, on its timeline, and taken by the sandbox App Store as Apple checks one.
@Suite("Subscription offers signed by the server")
struct OfferSignatureTests {
    static func sign(_ client: some TestClientProtocol, token: String, offer: String, orderNo: String) async throws
        -> TestResponse
    {
        try await client.execute(
            uri: "/v1/appstore/offers/\(offer)/signature", method: .post, headers: TestServer.bearer(token),
            body: ByteBuffer(string: #"{"order_no":"\#(orderNo)"}"#))
    }

    @Test("signed for the order's purchase, verified as the App Store verifies it, noted, bounded; refused otherwise")
    func signedForTheOrder() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let bob = try await TestServer.token("bob", lifetime: 3 * 86400)
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let response = try await Self.sign(client, token: alice, offer: "WINBACK_1", orderNo: order.orderNo)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let offer = try response.decoded(AppStoreOfferSignature.self)
            #expect(offer.appAccountToken == order.orderUUID.uuidString.lowercased())
            #expect(offer.productID == "com.example.ordersafe.vip.monthly" && offer.offerID == "WINBACK_1")
            #expect(await store.acceptsOffer(offer), "the App Store takes it")
            var forged = offer
            forged.appAccountToken = UUID().uuidString.lowercased()
            #expect(!(await store.acceptsOffer(forged)), "bound to its order: another token is refused")
            clock.advance(by: 25 * 3600)
            #expect(!(await store.acceptsOffer(offer)), "24 hours, then it lapses")

            // Another user's order, an order of a consumable, an offer id out of shape: refused.
            #expect(
                try await Self.sign(client, token: bob, offer: "WINBACK_1", orderNo: order.orderNo).status == .notFound)
            let coins = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let consumable = try await Self.sign(client, token: alice, offer: "WINBACK_1", orderNo: coins.orderNo)
            #expect(consumable.status == .conflict && String(buffer: consumable.body).contains("offer_not_applicable"))
            #expect(
                try await Self.sign(client, token: alice, offer: "a%20b", orderNo: order.orderNo).status == .badRequest)

            // On the order's timeline, each with its nonce; bounded with the app's other events on it.
            var status = HTTPResponse.Status.ok
            var signed = 1
            while status == .ok && signed < 100 {
                status = try await Self.sign(client, token: alice, offer: "WINBACK_1", orderNo: order.orderNo).status
                if status == .ok { signed += 1 }
            }
            #expect(signed < OrderService.appEventsKept && status == .conflict, "\(signed) signed")
            let detail = try await client.execute(
                uri: "/v1/admin/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            let body = String(buffer: detail.body)
            #expect(body.components(separatedBy: #""kind":"offer_signed""#).count - 1 == signed)
            #expect(body.contains("nonce:\(offer.nonce)"))
            #expect(!body.contains(offer.signature), "the signature itself is not kept")
        }
    }

    @Test("the sandbox App Store takes the compact JWS StoreKit is given only as the server signed it, for 24 hours")
    func compactJWSCheckedAsTheAppStoreDoes() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let offer = try await Self.sign(client, token: alice, offer: "WINBACK_1", orderNo: order.orderNo).decoded(
                AppStoreOfferSignature.self)
            let product = "com.example.ordersafe.vip.monthly"
            #expect(await store.acceptsOffer("WINBACK_1", productID: product, compactJWS: offer.compactJWS))
            #expect(!(await store.acceptsOffer("OTHER", productID: product, compactJWS: offer.compactJWS)))
            #expect(
                !(await store.acceptsOffer(
                    "WINBACK_1", productID: "com.example.ordersafe.vip.plus.monthly", compactJWS: offer.compactJWS)))
            // Its payload changed, its signature kept: refused.
            var parts = offer.compactJWS.split(separator: ".").map(String.init)
            var claims = try #require(IntroductoryEligibilityTests.claims(offer.compactJWS))
            claims["offerIdentifier"] = "WINBACK_2"
            parts[1] = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
            #expect(
                !(await store.acceptsOffer("WINBACK_2", productID: product, compactJWS: parts.joined(separator: "."))))
            #expect(!(await store.acceptsOffer("WINBACK_1", productID: product, compactJWS: "not.a.jws")))
            clock.advance(by: 25 * 3600)
            #expect(!(await store.acceptsOffer("WINBACK_1", productID: product, compactJWS: offer.compactJWS)))
        }
    }
}
