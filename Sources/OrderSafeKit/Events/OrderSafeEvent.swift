import Foundation
import OrderSafeModel

/// What the UI can follow through ``OrderSafe/events()``.
public enum OrderSafeEvent: Sendable {
    case productsLoaded(ProductList)
    /// An order was created (or found again after a relaunch) for a purchase.
    case orderCreated(orderNo: String, productID: String, channel: Channel)
    /// A purchase moved on: `stage` is one of ``PurchaseStage``.
    case purchaseStage(orderNo: String, stage: PurchaseStage)
    /// A purchase reached an outcome (final, or waiting: see ``PurchaseOutcome/State``).
    case purchaseOutcome(PurchaseOutcome)
    /// StoreKit was told the transaction is delivered.
    case transactionFinished(transactionID: UInt64, orderNo: String?)
    case entitlementsChanged(HoldingsResponse)
    /// The signed-in user's subscriptions changed (``OrderSafe/subscriptions(allowCached:)``).
    case subscriptionsChanged(SubscriptionsResponse)
    /// A journal file could not be read; it was moved to `unreadable/` in the journal folder.
    case journalProblem(file: String, reason: String)
    /// ``OrderSafe/logIn(_:)``: what is shown is this user's from now on.
    case signedIn(userID: String)
    /// ``OrderSafe/logOut()``: nothing of the previous user is shown any more.
    case signedOut
    /// The user started buying `productID` (a catalog id) on the App Store: a promoted in-app purchase, or with
    /// `offerID`, a promotional or win-back offer tapped there (iOS 18). Nothing is charged until the app buys it with
    /// ``OrderSafe/purchasePromoted(_:confirmIn:)`` when it is ready (signed in, say), bound to an order like any
    /// purchase, with the offer signed by the server. It waits in ``OrderSafeSnapshot/promotedPurchases`` until then.
    case promotedPurchase(productID: String, offerID: String?)
}

/// The steps a purchase shows on its way.
public enum PurchaseStage: String, Sendable, Hashable {
    /// The store's sheet or the provider's app is open.
    case paying
    /// Waiting for a parent's approval (Ask to Buy).
    case awaitingApproval = "awaiting_approval"
    /// The store charged; the server is recording it.
    case recording
    /// The provider's app answered; the server is confirming with the provider.
    case confirming
}

/// Fans events out to every stream opened with ``OrderSafe/events()``, and keeps the snapshot they add up to: a
/// stream and the snapshot it starts from are taken together, so a follower misses nothing and sees nothing twice.
/// An event of one user's (an order, a stage, an outcome, entitlements, subscriptions) reaches the snapshot and the
/// streams only while that user is the one signed in, checked as it is sent, under the same lock as sign-in and
/// sign-out: a purchase, fetch or resume that began for one user and ends after another signed in shows nothing.
final class EventHub: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var continuations: [UUID: AsyncStream<OrderSafeEvent>.Continuation] = [:]
    nonisolated(unsafe) private var current: OrderSafeSnapshot

    init(userID: String?) {
        current = OrderSafeSnapshot(userID: userID)
    }

    var snapshot: OrderSafeSnapshot { lock.withLock { current } }

    func stream() -> AsyncStream<OrderSafeEvent> { follow().events }

    /// The snapshot as of now, and every event after it.
    func follow() -> (snapshot: OrderSafeSnapshot, events: AsyncStream<OrderSafeEvent>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<OrderSafeEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock { _ = self.continuations.removeValue(forKey: id) }
        }
        let snapshot = lock.withLock {
            continuations[id] = continuation
            return current
        }
        return (snapshot, stream)
    }

    /// Sends `event` of user `owner` (nil: the device's, shown whoever is signed in); another user's is dropped.
    func send(_ event: OrderSafeEvent, of owner: String? = nil) {
        lock.withLock {
            if let owner, owner != current.userID { return }
            current.apply(event)
            for continuation in continuations.values { continuation.yield(event) }
        }
    }

    func finish() {
        for continuation in lock.withLock({ Array(continuations.values) }) {
            continuation.finish()
        }
    }
}
