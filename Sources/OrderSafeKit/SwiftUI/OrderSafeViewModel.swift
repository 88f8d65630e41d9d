#if canImport(Observation)
import Observation
import OrderSafeModel

/// OrderSafeKit's state for SwiftUI, on the main actor: the products with their display prices, the signed-in user's
/// entitlements and balances, each purchase of this session as it moves, and which of the paywall's actions are on
/// their way (``OrderSafeModelState``). It starts from ``OrderSafe/snapshot()`` and follows every event after it, so
/// a view that appears late sees the current state; signing out clears what belonged to the user. Create one beside
/// ``OrderSafe`` at launch and put it in the environment. Before iOS 17: `OrderSafeObservableModel`, the same model
/// as an `ObservableObject`.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor @Observable
public final class OrderSafeViewModel: OrderSafeStateHolder, OrderSafeModelDriver {
    /// What the view shows, and what of it is busy.
    public internal(set) var state: OrderSafeModelState
    /// The OrderSafe it follows.
    @ObservationIgnored public let orderSafe: OrderSafe
    @ObservationIgnored private var follower: Task<Void, Never>?

    /// Follows `orderSafe` until ``stop()`` (or until `orderSafe` stops).
    public init(_ orderSafe: OrderSafe) {
        self.orderSafe = orderSafe
        let (snapshot, events) = orderSafe.follow()
        state = OrderSafeModelState(snapshot)
        follower = following(events)
    }

    /// Stops following (the view model keeps what it has).
    public func stop() {
        follower?.cancel()
        follower = nil
    }

    /// Buys `productID` through `channel`; ``purchases`` shows it as it moves, and the product is in
    /// ``OrderSafeModelState/purchasing`` until it returns.
    @discardableResult
    public func purchase(_ productID: String, through channel: Channel, confirmIn scene: ConfirmationScene? = nil)
        async -> PurchaseOutcome
    {
        await buying(productID) { await orderSafe.purchase(productID, through: channel, confirmIn: scene) }
    }

    /// Buys `productID` with the subscription offer `offerID` (``OrderSafe/purchase(_:offer:confirmIn:)``).
    @discardableResult
    public func purchase(_ productID: String, offer offerID: String, confirmIn scene: ConfirmationScene? = nil)
        async -> PurchaseOutcome
    {
        await buying(productID) { await orderSafe.purchase(productID, offer: offerID, confirmIn: scene) }
    }

    /// Restores the user's App Store purchases (``OrderSafe/restore()``), marked ``OrderSafeModelState/isRestoring``
    /// meanwhile.
    @discardableResult
    public func restore() async throws(OrderSafeError) -> RestoreResult {
        try await restoring()
    }

    /// Loads what the paywall shows (``OrderSafe/paywall()``) into ``OrderSafeModelState/paywall``.
    @discardableResult
    public func loadPaywall() async throws(OrderSafeError) -> Paywall {
        try await loadingPaywall()
    }

    /// Signs `userID` in (``OrderSafe/logIn(_:)``), marked ``OrderSafeModelState/isSigningIn`` meanwhile.
    @discardableResult
    public func logIn(_ userID: String) async -> [PurchaseOutcome] {
        await signingIn(userID)
    }
}
#endif
