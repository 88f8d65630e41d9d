import Foundation
import Testing

@testable import OrderSafeKit
@testable import StoreKitStandIn

/// Promoted in-app purchases (`PurchaseIntent.intents`) and the purchase sheet over the app's scene
/// (`purchase(confirmIn:)`): an intent is announced and waits, bought later bound to an order like any purchase.
@Suite("StoreKit's entry points: promoted purchases and the scene the sheet shows over")
struct PromotedPurchaseTests {
    /// Waits until `done` holds for the snapshot (the intents listener runs on its own task).
    func eventually(_ app: OrderSafe, _ done: (OrderSafeSnapshot) -> Bool) async throws {
        for _ in 0..<2000 where !done(app.snapshot()) { try await Task.sleep(for: .milliseconds(1)) }
        #expect(done(app.snapshot()), "never reached: \(app.snapshot())")
    }

    @Test("a promoted purchase is announced by its catalog id, waits, and is bought through an order of its own")
    func promotedPurchaseIsBoughtLikeAnyPurchase() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let (_, events) = app.follow()
        await app.start()
        // The user tapped the promoted product on the App Store.
        h.store.intents.yield(StorePurchaseIntent(productID: "coins.ios"))
        try await eventually(app) { $0.promotedPurchases == ["coins"] }
        // Sent, so the stream opened before holds it (never waited for otherwise: the test would hang).
        try #require(app.snapshot().promotedPurchases == ["coins"])
        var announced: String?
        for await event in events {
            if case .promotedPurchase(let productID, nil) = event {
                announced = productID
                break
            }
        }
        #expect(announced == "coins")
        #expect(await h.store.charged.isEmpty, "nothing is charged before the app buys it")

        let outcome = await app.purchase("coins", through: .appStore)
        #expect(outcome.state == .fulfilled)
        #expect(outcome.orderNo != nil)
        #expect(app.snapshot().promotedPurchases == [], "bought: it waits no more")
        #expect(await h.store.charged.count == 1)
        await app.stop()
    }

    @Test(
        "an offer tapped on the App Store (iOS 18's PurchaseIntent.offer) is bought with that offer, signed by the server for the order: not at full price"
    )
    func promotedOfferIsBoughtWithItsOffer() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        await app.start()
        h.store.intents.yield(StorePurchaseIntent(productID: "vip.ios", offerID: "WINBACK_1"))
        try await eventually(app) { $0.promotedPurchases == ["vip"] }
        #expect(app.snapshot().promotedOffers == ["vip": "WINBACK_1"])
        let outcome = await app.purchasePromoted("vip")
        #expect(outcome.state == .fulfilled, "\(outcome.state)")
        let signed = try #require(await h.store.signedOptions.last)
        #expect(signed.promotionalOffer?.offerID == "WINBACK_1", "StoreKit got the offer the user tapped")
        #expect(signed.promotionalOffer?.compactJWS == "offer.jws.\(try #require(outcome.orderNo))")
        #expect(app.snapshot().promotedPurchases == [] && app.snapshot().promotedOffers == [:])

        // Without an offer it is an ordinary App Store purchase.
        h.store.intents.yield(StorePurchaseIntent(productID: "coins.ios"))
        try await eventually(app) { $0.promotedPurchases == ["coins"] }
        #expect(await app.purchasePromoted("coins").state == .fulfilled)
        #expect(await h.store.signedOptions.last == SignedPurchaseOptions())
        await app.stop()
    }

    @Test("an intent for a product the catalog does not sell through the App Store is left, and logged")
    func unknownIntentIsLeft() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        await app.start()
        h.store.intents.yield(StorePurchaseIntent(productID: "not.in.catalog"))
        h.store.intents.yield(StorePurchaseIntent(productID: "coins.ios"))
        try await eventually(app) { $0.promotedPurchases == ["coins"] }
        await app.stop()
    }

    @Test("signed out, an intent still waits for the sign-in; the same product tapped twice waits once")
    func intentWaitsForSignIn() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        await app.start()
        await app.logOut()
        h.store.intents.yield(StorePurchaseIntent(productID: "coins.ios"))
        h.store.intents.yield(StorePurchaseIntent(productID: "coins.ios"))
        try await eventually(app) { $0.promotedPurchases == ["coins"] }
        let signedOut = await app.purchase("coins", through: .appStore)
        #expect(signedOut.orderNo == nil)
        #expect(app.snapshot().promotedPurchases == ["coins"], "a purchase refused before its order leaves it waiting")
        await app.logIn("user-1")
        #expect(await app.purchase("coins", through: .appStore).state == .fulfilled)
        #expect(app.snapshot().promotedPurchases == [])
        await app.stop()
    }

    @Test("the scene the app passes reaches StoreKit's purchase call; none passed, none reaches it")
    @MainActor
    func sceneReachesTheStore() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let scene = UIScene(title: "second window")
        #expect(await app.purchase("coins", through: .appStore, confirmIn: scene).state == .fulfilled)
        #expect(await app.purchase("coins", through: .appStore).state == .fulfilled)
        let scenes = await h.store.scenes
        #expect(scenes.count == 2)
        #expect(scenes.first.flatMap { $0 } === scene)
        #expect(scenes.last.flatMap { $0 } == nil)
    }

    @Test(
        "the adapter reads PurchaseIntent.offer as StoreKit gives it: a win-back or promotional offer's id; an introductory offer is StoreKit's own business"
    )
    func adapterReadsTheIntentsOffer() throws {
        let product = Product(
            id: "vip.ios", type: .autoRenewable, displayName: "VIP", description: "VIP", price: 25,
            displayPrice: "¥25", isFamilyShareable: false)
        func intent(_ offer: Product.SubscriptionOffer?) -> PurchaseIntent {
            PurchaseIntent(product: product, offer: offer)
        }
        func offer(_ id: String?, _ type: Product.SubscriptionOffer.OfferType) -> Product.SubscriptionOffer {
            .init(
                id: id, type: type, price: 12, displayPrice: "¥12", period: .init(unit: .month, value: 1),
                periodCount: 1, paymentMode: .payAsYouGo)
        }
        #expect(StoreKitClient.offer(intent(offer("WINBACK_1", .winBack))) == "WINBACK_1")
        #expect(StoreKitClient.offer(intent(offer("STAY_HALF_PRICE", .promotional))) == "STAY_HALF_PRICE")
        #expect(StoreKitClient.offer(intent(offer(nil, .introductory))) == nil)
        #expect(StoreKitClient.offer(intent(nil)) == nil)
    }
}
