#if canImport(Combine)
import Combine
import OrderSafeModel

/// ``OrderSafeViewModel`` as an `ObservableObject`, for iOS 15 and 16 (and any app that keeps to Combine): the same
/// state, changed by the same code, published for SwiftUI's `@StateObject` and `@ObservedObject`.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
@MainActor
public final class OrderSafeObservableModel: ObservableObject, OrderSafeStateHolder, OrderSafeModelDriver {
    /// What the view shows, and what of it is busy.
    @Published public internal(set) var state: OrderSafeModelState
    /// The OrderSafe it follows.
    public let orderSafe: OrderSafe
    private var follower: Task<Void, Never>?

    /// Follows `orderSafe` until ``stop()`` (or until `orderSafe` stops).
    public init(_ orderSafe: OrderSafe) {
        self.orderSafe = orderSafe
        let (snapshot, events) = orderSafe.follow()
        state = OrderSafeModelState(snapshot)
        follower = following(events)
    }

    /// Stops following (the model keeps what it has).
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
