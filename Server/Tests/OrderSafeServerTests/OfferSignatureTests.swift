import AppStore
import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OrderSafeModel
import Sandbox
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
            let response = try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: order.orderNo)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let offer = try response.decoded(AppStoreOfferSignature.self)
            #expect(offer.appAccountToken == order.orderUUID.uuidString.lowercased())
            #expect(offer.productID == "com.example.ordersafe.vip.monthly" && offer.offerID == "FIRST_MONTH")
            #expect(await store.acceptsOffer(offer), "the App Store takes it")
            var forged = offer
            forged.appAccountToken = UUID().uuidString.lowercased()
            #expect(!(await store.acceptsOffer(forged)), "bound to its order: another token is refused")
            clock.advance(by: 25 * 3600)
            #expect(!(await store.acceptsOffer(offer)), "24 hours, then it lapses")

            // Another user's order, an order of a consumable, an offer id out of shape: refused.
            #expect(
                try await Self.sign(client, token: bob, offer: "FIRST_MONTH", orderNo: order.orderNo).status
                    == .notFound)
            let coins = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let consumable = try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: coins.orderNo)
            #expect(consumable.status == .conflict && String(buffer: consumable.body).contains("offer_not_applicable"))
            #expect(
                try await Self.sign(client, token: alice, offer: "a%20b", orderNo: order.orderNo).status == .badRequest)

            // On the order's timeline, each with its nonce; bounded with the app's other events on it.
            var status = HTTPResponse.Status.ok
            var signed = 1
            while status == .ok && signed < 100 {
                status = try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: order.orderNo).status
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
            let offer = try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: order.orderNo).decoded(
                AppStoreOfferSignature.self)
            let product = "com.example.ordersafe.vip.monthly"
            #expect(await store.acceptsOffer("FIRST_MONTH", productID: product, compactJWS: offer.compactJWS))
            #expect(!(await store.acceptsOffer("OTHER", productID: product, compactJWS: offer.compactJWS)))
            #expect(
                !(await store.acceptsOffer(
                    "FIRST_MONTH", productID: "com.example.ordersafe.vip.plus.monthly", compactJWS: offer.compactJWS)))
            // Its payload changed, its signature kept: refused.
            var parts = offer.compactJWS.split(separator: ".").map(String.init)
            var claims = try #require(IntroductoryEligibilityTests.claims(offer.compactJWS))
            claims["offerIdentifier"] = "STAY_HALF_PRICE"
            parts[1] = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
            #expect(
                !(await store.acceptsOffer(
                    "STAY_HALF_PRICE", productID: product, compactJWS: parts.joined(separator: "."))))
            #expect(!(await store.acceptsOffer("FIRST_MONTH", productID: product, compactJWS: "not.a.jws")))
            clock.advance(by: 25 * 3600)
            #expect(!(await store.acceptsOffer("FIRST_MONTH", productID: product, compactJWS: offer.compactJWS)))
        }
    }

    @Test(
        "a phone's purchase passes the offer in either form StoreKit has (the iOS 26 SDK's compact JWS, the older SDKs' signature): each is taken only as signed, for its order"
    )
    func eitherFormAtThePurchase() async throws {
        try await TestServer.withComponents { client, components, _ in
            let devices = components.sandbox!.appStoreDevices
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let product = "com.example.ordersafe.vip.monthly"
            func offered() async throws -> (Order, AppStoreOfferSignature) {
                let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                    OrderResponse.self
                ).order
                let offer = try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: order.orderNo)
                    .decoded(AppStoreOfferSignature.self)
                return (order, offer)
            }
            func buy(_ token: UUID, _ offer: SignedOffer) async throws -> SandboxAppStoreDevices.PurchaseResult {
                try await devices.purchase(
                    device: "offer-phone", productID: product, appAccountToken: token, askToBuy: false, confirm: true,
                    offer: offer)
            }
            func legacy(_ offer: AppStoreOfferSignature, signature: String? = nil) throws -> SignedOffer {
                .signature(
                    offerID: offer.offerID, keyID: offer.keyID, nonce: try #require(UUID(uuidString: offer.nonce)),
                    signature: signature ?? offer.signature, timestamp: offer.timestamp)
            }
            let (first, firstOffer) = try await offered()
            let (second, secondOffer) = try await offered()
            // Each form for another order's token, or altered, is refused; nothing is charged.
            #expect(try await buy(second.orderUUID, legacy(firstOffer)) == .invalidOfferSignature)
            var der = try #require(Data(base64Encoded: firstOffer.signature))
            der[der.count - 1] ^= 0x01  // the last byte of s: still DER, no longer the merchant's signature
            let forged = der.base64EncodedString()
            #expect(try await buy(first.orderUUID, legacy(firstOffer, signature: forged)) == .invalidOfferSignature)
            #expect(
                try await buy(first.orderUUID, .compactJWS(offerID: "STAY_HALF_PRICE", firstOffer.compactJWS))
                    == .invalidOfferSignature)
            // As signed, for its own order: each form buys at the offer's price.
            for (order, offer) in [
                (first, try legacy(firstOffer)), (second, .compactJWS(offerID: "FIRST_MONTH", secondOffer.compactJWS)),
            ] {
                guard case .success(let signed) = try await buy(order.orderUUID, offer) else {
                    Issue.record("\(offer) was refused")
                    continue
                }
                let claims = try #require(IntroductoryEligibilityTests.claims(signed))
                #expect(claims["offerIdentifier"] as? String == "FIRST_MONTH" && claims["offerType"] as? Int == 2)
                #expect(claims["appAccountToken"] as? String == order.orderUUID.uuidString.lowercased())
            }
        }
    }

    @Test(
        "only offers the catalog lists, only for whom they are: an unlisted id, a win-back offer or a retention offer for one who never subscribed are refused; a subscriber gets the retention offer, tied to their history"
    )
    func offersTheMerchantControls() async throws {
        try await TestServer.withComponents { client, components, _ in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let unpaid = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let unlisted = try await Self.sign(client, token: alice, offer: "STAFF_FREE_YEAR", orderNo: unpaid.orderNo)
            #expect(try unlisted.status == .notFound && unlisted.errorCode() == "offer_not_found")
            for offer in ["WINBACK_1", "STAY_HALF_PRICE"] {
                let refused = try await Self.sign(client, token: alice, offer: offer, orderNo: unpaid.orderNo)
                #expect(try refused.status == .conflict && refused.errorCode() == "offer_not_eligible", "\(offer)")
            }
            #expect(
                try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: unpaid.orderNo).status == .ok)

            // Alice subscribes: now the retention offer is hers, the first-month one no longer.
            let (id, jws) = try await store.purchase(
                productID: "com.example.ordersafe.vip.monthly", type: "Auto-Renewable Subscription",
                appAccountToken: unpaid.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let next = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let first = try await Self.sign(client, token: alice, offer: "FIRST_MONTH", orderNo: next.orderNo)
            #expect(try first.status == .conflict && first.errorCode() == "offer_not_eligible")
            let stay = try await Self.sign(client, token: alice, offer: "STAY_HALF_PRICE", orderNo: next.orderNo)
            #expect(stay.status == .ok, "\(String(buffer: stay.body))")
            let signed = try stay.decoded(AppStoreOfferSignature.self)
            let claims = try #require(IntroductoryEligibilityTests.claims(signed.compactJWS))
            #expect(claims["transactionId"] as? String == id, "the offer names the subscriber's history")
            #expect(await store.acceptsOffer(signed))
            let timeline = try await client.execute(
                uri: "/v1/admin/orders/\(next.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(String(buffer: timeline.body).contains("offer:STAY_HALF_PRICE nonce:\(signed.nonce) for:active"))
        }
    }
}
