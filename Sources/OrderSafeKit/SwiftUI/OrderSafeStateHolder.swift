import OrderSafeModel

/// A model holding an ``OrderSafeModelState`` — ``OrderSafeViewModel`` and `OrderSafeObservableModel` — with its
/// parts by name and the actions a paywall takes through it: a view written against this protocol serves both.
@MainActor
public protocol OrderSafeStateHolder: AnyObject {
    /// What the view shows, and what of it is busy.
    var state: OrderSafeModelState { get }
    /// The OrderSafe it follows.
    var orderSafe: OrderSafe { get }
    /// Buys `productID` through `channel`, marked ``OrderSafeModelState/isPurchasing(_:)`` until it returns.
    func purchase(_ productID: String, through channel: Channel, confirmIn scene: ConfirmationScene?) async
        -> PurchaseOutcome
    /// Buys `productID` with the subscription offer `offerID`.
    func purchase(_ productID: String, offer offerID: String, confirmIn scene: ConfirmationScene?) async
        -> PurchaseOutcome
    /// Restores the user's App Store purchases, marked ``OrderSafeModelState/isRestoring`` meanwhile.
    func restore() async throws(OrderSafeError) -> RestoreResult
    /// Loads the paywall into ``OrderSafeModelState/paywall``.
    func loadPaywall() async throws(OrderSafeError) -> Paywall
}

extension OrderSafeStateHolder {
    /// The products, entitlements, subscriptions and purchases, as of the last event.
    public var snapshot: OrderSafeSnapshot { state.snapshot }
    /// Who is signed in; nil: nobody.
    public var userID: String? { state.snapshot.userID }
    /// The products on sale, once loaded.
    public var products: ProductList? { state.snapshot.products }
    /// The signed-in user's entitlements and balances, once loaded.
    public var entitlements: HoldingsResponse? { state.snapshot.entitlements }
    /// The signed-in user's subscriptions, once loaded.
    public var subscriptions: [UserSubscription] { state.snapshot.subscriptions?.subscriptions ?? [] }
    /// This session's purchases, oldest first.
    public var purchases: [PurchaseProgress] { state.snapshot.purchases }

    /// Loads the products (the model shows them when the load is done).
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
}
