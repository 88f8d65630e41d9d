import Foundation
import OrderSafeModel
import StoreKitStandIn
import Testing

@testable import OrderSafeKit

/// Subscription offers signed by the server for the purchase's own order, the server's word on introductory-offer
/// eligibility passed to StoreKit, and Apple's subscription-management and refund sheets.
@Suite("Subscription offers, eligibility and Apple's sheets")
struct SubscriptionOffersTests {
    @Test("an offer is signed for the purchase's order and handed to StoreKit with it")
    func offerSignedForTheOrder() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let outcome = await app.purchase("vip", offer: "WINBACK_1")
        #expect(outcome.state == .fulfilled, "\(outcome.state)")
        let signed = try #require(await h.store.signedOptions.last)
        let orderNo = try #require(outcome.orderNo)
        let order = try #require(await h.server.orders[orderNo])
        #expect(
            signed.promotionalOffer
                == .init(
                    offerID: "WINBACK_1", compactJWS: "offer.jws.\(orderNo)", keyID: "KEY", nonce: order.orderUUID,
                    signature: Data("sig".utf8), timestamp: 1_700_000_000_000),
            "both forms: the compact JWS for the iOS 26 SDK, the signature for the SDKs before it")
        #expect(signed.introductoryOfferEligibility == nil, "an eligible user: StoreKit decides")
    }

    @Test("an offer the server will not sign: nothing is charged, the order is given up, the app hears why")
    func offerRefused() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let outcome = await app.purchase("coins", offer: "WINBACK_1")
        guard case .failed(.server(.refused(_, let code, _))) = outcome.state else {
            Issue.record("\(outcome.state)")
            return
        }
        #expect(code == "offer_not_applicable")
        #expect(await h.store.charged.isEmpty, "nothing charged")
        #expect(await h.store.signedOptions.isEmpty, "StoreKit was never asked")
        let orderNo = try #require(outcome.orderNo)
        #expect(await h.server.orders[orderNo]?.status == .cancelled)
        #expect(h.journalFiles.isEmpty, "nothing left to resume")
    }

    @Test("a user who subscribed before: StoreKit gets the server's signed ineligibility; eligibility is readable")
    func ineligibleUser() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.server.set(ineligible: "user-1")
        let app = h.app()
        #expect(
            try await app.introductoryOfferEligibility() == [
                .init(productID: "vip", eligible: false, signedEligibility: "eligibility.jws.user-1")
            ])
        #expect(await app.purchase("vip", through: .appStore).state == .fulfilled)
        #expect(await h.store.signedOptions.last?.introductoryOfferEligibility == "eligibility.jws.user-1")
        // A consumable carries nothing signed.
        #expect(await app.purchase("coins", through: .appStore).state == .fulfilled)
        #expect(await h.store.signedOptions.last == SignedPurchaseOptions())
    }

    @Test("the manage-subscriptions and refund sheets go to StoreKit; a refund needs a purchase of the Apple ID")
    @MainActor
    func sheets() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let scene = UIScene(title: "settings")
        try await app.showManageSubscriptions(in: scene, subscriptionGroupID: "21000001")
        do {
            _ = try await app.requestRefund(for: "vip", in: scene)
            Issue.record("a refund was requested for nothing bought")
        } catch {
            #expect(error == .nothingToRefund("vip"))
        }
        #expect(await app.purchase("vip", through: .appStore).state == .fulfilled)
        await h.store.entitle("vip.ios")
        #expect(try await app.requestRefund(for: "vip", in: scene))
        let bought = try #require(await h.store.charged.last)
        #expect(await h.store.sheets == ["manage_subscriptions:21000001", "refund_request:\(bought.id)"])
    }

    @Test(
        "a refund by order, for every product type: coins (never in StoreKit's entitlements) get Apple's sheet for the transaction that paid them; an unpaid order or one paid through Alipay is told so"
    )
    @MainActor
    func refundByOrder() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        h.vendors.alipayStatus = "9000"
        let app = h.app()
        let scene = UIScene(title: "support")
        let coins = await app.purchase("coins", through: .appStore)
        #expect(coins.state == .fulfilled)
        let bought = try #require(await h.store.charged.last)
        #expect(await h.store.currentEntitlements().isEmpty, "a consumable is never among StoreKit's entitlements")
        #expect(try await app.requestRefund(forOrder: try #require(coins.orderNo), in: scene))
        #expect(await h.store.sheets == ["refund_request:\(bought.id)"])

        let gift = await app.purchase("gift", through: .alipay)
        #expect(gift.state == .fulfilled)
        await #expect(throws: OrderSafeError.refundedByMerchant(orderNo: try #require(gift.orderNo))) {
            try await app.requestRefund(forOrder: try #require(gift.orderNo), in: scene)
        }
        #expect(
            OrderSafeError.refundedByMerchant(orderNo: "x").message(in: .simplifiedChinese).contains("App Store"))

        await h.store.set(sheet: .askToBuy)
        let waiting = await app.purchase("coins", through: .appStore)
        await #expect(throws: OrderSafeError.nothingToRefund("coins")) {
            try await app.requestRefund(forOrder: try #require(waiting.orderNo), in: scene)
        }
        #expect(await h.store.sheets.count == 1, "no sheet for what nobody paid")
    }
}
