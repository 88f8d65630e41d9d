import OrderSafeModel

/// What a paywall shows: the ``OrderSafeSnapshot``, and which of the view's own actions are on their way — the
/// products being bought, a restore, a sign-in — so their buttons can be disabled. ``OrderSafeViewModel`` (iOS 17 and
/// later) and `OrderSafeObservableModel` (iOS 15 and later) keep one each and change it the same way.
public struct OrderSafeModelState: Sendable, Hashable {
    /// The products, entitlements, subscriptions and purchases, as of the last event.
    public internal(set) var snapshot: OrderSafeSnapshot
    /// A restore this model started is on its way.
    public internal(set) var isRestoring = false
    /// A sign-in this model started is on its way (it resumes what the user left on its way).
    public internal(set) var isSigningIn = false
    /// The signed-in user's last restore through this model.
    public internal(set) var lastRestore: RestoreResult?
    /// The paywall as last loaded for the signed-in user (``OrderSafe/paywall()``), loaded again after a purchase
    /// through this model fulfils (a subscriber's introductory offer and offers change).
    public internal(set) var paywall: Paywall?
    /// Purchases started through this model and not returned yet, by product.
    private var inFlight: [String: InFlight] = [:]

    /// Taps on a product's button whose purchases have not returned, and whose they are.
    private struct InFlight: Sendable, Hashable {
        var taps: Int
        var user: String?
    }

    init(_ snapshot: OrderSafeSnapshot) {
        self.snapshot = snapshot
    }

    /// The products whose purchase this model started and that have not returned (a second tap joins the first).
    public var purchasing: Set<String> { Set(inFlight.keys) }

    /// Whether a purchase of `productID` started through this model is on its way.
    public func isPurchasing(_ productID: String) -> Bool { inFlight[productID] != nil }

    /// The last outcome of each product the signed-in user bought this session (final or waiting), by product.
    public var lastOutcome: [String: PurchaseOutcome] {
        var outcomes: [String: PurchaseOutcome] = [:]
        for purchase in snapshot.purchases {
            if let outcome = purchase.outcome { outcomes[purchase.productID] = outcome }
        }
        return outcomes
    }

    /// Applies one event; another user signing in (or out) takes the previous one's busy states too.
    mutating func apply(_ event: OrderSafeEvent) {
        let user = snapshot.userID
        snapshot.apply(event)
        guard snapshot.userID != user else { return }
        inFlight = [:]
        isRestoring = false
        lastRestore = nil
        paywall = nil
    }

    mutating func began(_ productID: String) {
        let user = snapshot.userID
        inFlight[productID] = InFlight(taps: (inFlight[productID]?.taps ?? 0) + 1, user: user)
    }

    /// A purchase of `productID` that `user` started returned (nothing changes if the user changed since).
    mutating func ended(_ productID: String, of user: String?) {
        guard let running = inFlight[productID], running.user == user else { return }
        inFlight[productID] = running.taps > 1 ? InFlight(taps: running.taps - 1, user: user) : nil
    }
}
