#if canImport(Observation)
import Observation
import OrderSafeModel

/// OrderSafeKit's state for SwiftUI, on the main actor: the products with their display prices, the signed-in user's
/// entitlements and balances, and each purchase of this session as it moves. It starts from ``OrderSafe/snapshot()``
/// and follows every event after it, so a view that appears late sees the current state; signing out clears what
/// belonged to the user. Create one beside ``OrderSafe`` at launch and put it in the environment.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor @Observable
public final class OrderSafeViewModel {
    /// What the view shows; its parts are below.
    public private(set) var snapshot: OrderSafeSnapshot
    @ObservationIgnored private let orderSafe: OrderSafe
    @ObservationIgnored private var following: Task<Void, Never>?

    /// Follows `orderSafe` until ``stop()`` (or until `orderSafe` stops).
    public init(_ orderSafe: OrderSafe) {
        self.orderSafe = orderSafe
        let (snapshot, events) = orderSafe.follow()
        self.snapshot = snapshot
        following = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.snapshot.apply(event)
            }
        }
    }

    /// Stops following (the view model keeps what it has).
    public func stop() {
        following?.cancel()
        following = nil
    }

    /// Who is signed in; nil: nobody.
    public var userID: String? { snapshot.userID }
    /// The products on sale, once loaded (``loadProducts()``).
    public var products: ProductList? { snapshot.products }
    /// The signed-in user's entitlements and balances, once loaded (``refreshEntitlements()``).
    public var entitlements: HoldingsResponse? { snapshot.entitlements }
    /// The signed-in user's subscriptions, once loaded (``refreshSubscriptions()``).
    public var subscriptions: [UserSubscription] { snapshot.subscriptions?.subscriptions ?? [] }
    /// This session's purchases, oldest first.
    public var purchases: [PurchaseProgress] { snapshot.purchases }

    /// Loads the products (the view model shows them when the load is done).
    public func loadProducts() async throws(OrderSafeError) {
        _ = try await orderSafe.products()
    }

    /// Loads the signed-in user's entitlements.
    public func refreshEntitlements() async throws(OrderSafeError) {
        _ = try await orderSafe.entitlements()
    }

    /// Loads the signed-in user's subscriptions.
    public func refreshSubscriptions() async throws(OrderSafeError) {
        _ = try await orderSafe.subscriptions()
    }

    /// Buys `productID` through `channel`; ``purchases`` shows it as it moves.
    @discardableResult
    public func purchase(_ productID: String, through channel: Channel, confirmIn scene: ConfirmationScene? = nil)
        async -> PurchaseOutcome
    {
        await orderSafe.purchase(productID, through: channel, confirmIn: scene)
    }
}
#endif
