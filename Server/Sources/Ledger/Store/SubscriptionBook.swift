import Foundation
import OrderSafeModel

/// What the App Store last said of each subscription: per chain (original transaction), the newest signed version of
/// each of its transactions and of its renewal information. The engine folds them into subscription states.
public protocol SubscriptionBook: Sendable {
    /// Keeps `signal` unless one that ``SubscriptionSignal/supersedes(_:)`` it is kept already: Apple's order, not
    /// the order of arrival, decides.
    func recordSubscriptionSignal(_ signal: SubscriptionSignal) async throws

    /// The signals of every chain `userID` owns (a chain is the user's through any payment of it the ledger
    /// recorded for them), at most ``SubscriptionSignal/maxPerUser``.
    func subscriptionSignals(userID: String) async throws -> [SubscriptionSignal]

    /// The signals of one chain (at most ``SubscriptionSignal/maxPerUser``).
    func subscriptionSignals(chain: String) async throws -> [SubscriptionSignal]

    /// A subscription's state changed: in one write, an event on the timeline of `orderNo` (the order of its latest
    /// period) and a `subscription.updated` webhook carrying the order and the subscription.
    func subscriptionChanged(
        orderNo: String, to subscription: UserSubscription, cause: EventCause, evidence: String, at date: Date
    ) async throws
}
