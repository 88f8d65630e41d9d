import Foundation

/// What the App Store last said of each subscription: per chain (original transaction), the newest signed version of
/// each of its transactions and of its renewal information. The engine folds them into subscription states.
public protocol SubscriptionBook: Sendable {
    /// Keeps `signal` unless one that ``SubscriptionSignal/supersedes(_:)`` it is kept already: Apple's order, not
    /// the order of arrival, decides.
    func recordSubscriptionSignal(_ signal: SubscriptionSignal) async throws

    /// The signals of every chain `userID` owns (a chain is the user's through any payment of it the ledger
    /// recorded for them), at most ``SubscriptionSignal/maxPerUser``.
    func subscriptionSignals(userID: String) async throws -> [SubscriptionSignal]
}
