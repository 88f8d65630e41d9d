#if canImport(Observation)
import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// The view model a SwiftUI app shows: the current state for a view that appears late, each purchase's steps in the
/// order they happened, and nothing of a user after they sign out.
@Suite("OrderSafeViewModel: the state SwiftUI shows")
@MainActor
struct ViewModelTests {
    /// Waits until the model has applied what was sent (events reach it on the main actor, in order).
    func caughtUp(_ model: OrderSafeViewModel, _ done: (OrderSafeSnapshot) -> Bool) async throws {
        for _ in 0..<2000 where !done(model.snapshot) { try await Task.sleep(for: .milliseconds(1)) }
        #expect(done(model.snapshot), "the view model never caught up: \(model.snapshot)")
    }

    @Test("a view model made after the purchase shows its outcome, the entitlements and the products")
    func lateViewSeesTheCurrentState() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        _ = try await app.products()
        let outcome = await app.purchase("coins", through: .appStore)
        #expect(outcome.state == .fulfilled)
        _ = try await app.entitlements()

        let model = OrderSafeViewModel(app)  // everything above happened before it existed
        #expect(model.userID == "user-1")
        #expect(model.products?.offers.map(\.id).contains("coins") == true)
        #expect(model.entitlements?.balances == [Balance(name: "coins", amount: 60)])
        let orderNo = try #require(outcome.orderNo)
        let shown = try #require(model.snapshot.purchase(orderNo: orderNo))
        #expect(shown.outcome?.state == .fulfilled)
        #expect(shown.productID == "coins" && shown.channel == .appStore)
    }

    @Test("a purchase's steps, in the order they happened: ordered, paying, confirming, fulfilled (Alipay)")
    func stepsInOrder() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let model = OrderSafeViewModel(app)
        let outcome = await model.purchase("gift", through: .alipay)
        #expect(outcome.state == .fulfilled)
        let orderNo = try #require(outcome.orderNo)
        try await caughtUp(model) { $0.purchase(orderNo: orderNo)?.outcome != nil }
        let steps = try #require(model.snapshot.purchase(orderNo: orderNo)).steps
        #expect(steps == [.ordered, .stage(.paying), .stage(.confirming), .outcome(outcome)])
    }

    @Test("the App Store's steps: ordered, paying, recording, fulfilled; then the entitlements it granted")
    func appStoreStepsInOrder() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let model = OrderSafeViewModel(app)
        let outcome = await model.purchase("coins", through: .appStore)
        let orderNo = try #require(outcome.orderNo)
        try await caughtUp(model) { $0.purchase(orderNo: orderNo)?.outcome != nil && $0.entitlements != nil }
        #expect(
            model.snapshot.purchase(orderNo: orderNo)?.steps
                == [.ordered, .stage(.paying), .stage(.recording), .outcome(outcome)])
        #expect(model.entitlements?.balances == [Balance(name: "coins", amount: 60)])
    }

    @Test("signing out clears the user's entitlements and purchases (the products stay); another user starts empty")
    func signOutClearsIt() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let model = OrderSafeViewModel(app)
        try await model.loadProducts()
        _ = await model.purchase("coins", through: .appStore)
        try await model.refreshEntitlements()
        try await caughtUp(model) { $0.entitlements != nil && !$0.purchases.isEmpty }

        await app.logOut()
        try await caughtUp(model) { $0.userID == nil }
        #expect(model.entitlements == nil)
        #expect(model.purchases.isEmpty)
        #expect(model.products != nil)

        await app.logIn("user-2")
        try await caughtUp(model) { $0.userID == "user-2" }
        #expect(model.entitlements == nil && model.purchases.isEmpty)
        #expect(OrderSafeViewModel(app).snapshot == model.snapshot, "a model made now starts where this one is")
    }

    @Test(
        "a product is `purchasing` while its sheet is up and until its purchase returns; a second tap meanwhile is refused and leaves it so"
    )
    func purchasingWhileOnItsWay() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(holds: true)
        let model = OrderSafeViewModel(h.app())
        let first = Task { await model.purchase("coins", through: .appStore) }
        for _ in 0..<2000 where await h.store.sheetsShown == 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(model.state.isPurchasing("coins") && model.state.purchasing == ["coins"])
        #expect(!model.state.isPurchasing("gift"))
        let second = await model.purchase("coins", through: .appStore)
        #expect(second.orderNo == nil, "one purchase in flight per product: \(second.name)")
        #expect(model.state.isPurchasing("coins"), "the first is still on its way")
        await h.store.release()
        #expect(await first.value.state == .fulfilled)
        #expect(model.state.purchasing.isEmpty)
        try await caughtUp(model) { $0.purchases.last?.outcome != nil }
        #expect(model.state.lastOutcome["coins"]?.state == .fulfilled)
    }

    @Test(
        "another user signing in while a purchase is on its way: nothing of it shows busy for them, before or after it returns"
    )
    func purchasingIsTheUsers() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(holds: true)
        let app = h.app()
        let model = OrderSafeViewModel(app)
        let alices = Task { await model.purchase("coins", through: .appStore) }
        for _ in 0..<2000 where await h.store.sheetsShown == 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(model.state.isPurchasing("coins"))
        _ = await model.logIn("user-2")
        try await caughtUp(model) { $0.userID == "user-2" }
        #expect(model.state.purchasing.isEmpty && !model.state.isSigningIn)
        await h.store.set(holds: false)
        let bobs = Task { await model.purchase("coins", through: .appStore) }
        await h.store.release()
        _ = await alices.value
        #expect(model.state.lastOutcome["coins"]?.userID != "user-1", "alice's outcome is not shown to user-2")
        _ = await bobs.value
        #expect(model.state.purchasing.isEmpty)
    }

    @Test("a restore is `restoring` until it answers, and its answer is kept for the user")
    func restoreState() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let model = OrderSafeViewModel(h.app())
        _ = await model.purchase("vip", through: .appStore)
        let result = try await model.restore()
        #expect(!model.state.isRestoring)
        #expect(model.state.lastRestore == result)
    }

    @Test("the paywall in the model: loaded, loaded again once a purchase fulfils, gone when another user signs in")
    func paywallState() async throws {
        let h = await PaywallTests.harness()
        defer { h.cleanUp() }
        let model = OrderSafeViewModel(h.app())
        let before = try await model.loadPaywall()
        #expect(model.state.paywall == before)
        #expect(before.products.first { $0.id == "vip" }?.isEligibleForIntroductoryOffer == true)
        await h.server.set(ineligible: "user-1")  // what the server says once she subscribed
        #expect(await model.purchase("vip", through: .appStore).state == .fulfilled)
        #expect(
            model.state.paywall?.products.first { $0.id == "vip" }?.isEligibleForIntroductoryOffer == false,
            "the paywall was asked again after the purchase")
        _ = await model.logIn("user-2")
        try await caughtUp(model) { $0.userID == "user-2" }
        #expect(model.state.paywall == nil, "user-1's offers are not shown to user-2")
    }
}
#endif
