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

/// What the console reads of subscriptions: counts per group from the states last announced, and one
/// subscription's timeline.
public protocol SubscriptionReads: Sendable {
    /// Per subscription group: subscribers active, in grace, in billing retry at `now`, and churned (expired,
    /// revoked or lapsed) since `churnSince`.
    func subscriptionCounts(now: Date, churnSince: Date) async throws -> [SubscriptionGroupCounts]

    /// The events of every order of chain `chain` (its periods' payments, state changes, notifications), oldest
    /// first, at most ``SubscriptionTimelineEntry/maxEntries``.
    func subscriptionTimeline(chain: String) async throws -> [SubscriptionTimelineEntry]
}

/// One subscription group's subscribers by state.
public struct SubscriptionGroupCounts: Sendable, Hashable {
    public var groupID: String
    public var active: Int
    public var inGracePeriod: Int
    public var inBillingRetry: Int
    public var churned: Int

    public init(groupID: String, active: Int, inGracePeriod: Int, inBillingRetry: Int, churned: Int) {
        self.groupID = groupID
        self.active = active
        self.inGracePeriod = inGracePeriod
        self.inBillingRetry = inBillingRetry
        self.churned = churned
    }
}

/// One event on a subscription's timeline: its order and what happened.
public struct SubscriptionTimelineEntry: Sendable, Hashable {
    public static let maxEntries = 500

    public var orderNo: String
    public var kind: OrderEventKind
    public var evidence: String?
    public var at: Date
}
