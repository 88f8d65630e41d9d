import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

/// A user's subscriptions from what the App Store said, one per subscription group. Per chain: the newest version of
/// each transaction and of the renewal information (``SubscriptionSignal/supersedes(_:)``: Apple's `signedDate`, so
/// signals arriving in any order give one answer). The period now is the transaction that ends last, upgraded ones
/// aside; its state is Apple's subscription status:
/// - revoked when that period was refunded or revoked;
/// - active while it lasts;
/// - after it, in the grace period while Apple retries billing and the grace period lasts (access kept);
/// - in billing retry while Apple retries without grace (no access);
/// - else expired, with `expirationIntent`'s reason.
/// Two chains of one group (two Apple IDs of one user) show the one giving most: active, grace, retry, expired,
/// revoked; then the later expiry.
public enum SubscriptionFold {
    public static func statuses(_ signals: [SubscriptionSignal], at now: Date) -> [UserSubscription] {
        var newest: [String: SubscriptionSignal] = [:]
        for signal in signals {
            let id = [signal.chain, signal.kind.rawValue, signal.key].joined(separator: "\u{0}")
            if let kept = newest[id], !signal.supersedes(kept) { continue }
            newest[id] = signal
        }
        var byGroup: [String: UserSubscription] = [:]
        for (chain, signals) in Dictionary(grouping: newest.values, by: \.chain) {
            guard let status = status(chain: chain, signals, now: now.millisecondsSince1970) else { continue }
            if let kept = byGroup[status.groupID], !ranks(status, above: kept) { continue }
            byGroup[status.groupID] = status
        }
        return byGroup.values.sorted { $0.groupID < $1.groupID }
    }

    private static func status(chain: String, _ signals: [SubscriptionSignal], now: Int64) -> UserSubscription? {
        let periods = signals.filter { $0.kind == .transaction && $0.upgraded != true }
        guard
            let current = periods.max(by: { ends($0) < ends($1) }), let transactionID = current.transactionID,
            let productID = current.productID, let groupID = current.groupID
        else { return nil }
        let renewal = signals.first { $0.kind == .renewal }
        var state = SubscriptionState.expired
        var reason: ExpirationReason?
        if current.revokedAt != nil {
            state = .revoked
        } else if let expires = current.expiresAt, expires > now {
            state = .active
        } else if renewal?.inBillingRetry == true {
            state = (renewal?.gracePeriodEndsAt).map { $0 > now } == true ? .inGracePeriod : .inBillingRetry
        } else {
            reason = renewal?.expirationIntent.flatMap(ExpirationReason.init(expirationIntent:))
        }
        return UserSubscription(
            groupID: groupID, state: state, expirationReason: reason, productID: productID,
            renewalProductID: renewal?.renewalProductID, autoRenew: renewal?.autoRenew,
            expiresAt: current.expiresAt.map(Date.init(millisecondsSince1970:)),
            gracePeriodEndsAt: renewal?.gracePeriodEndsAt.map(Date.init(millisecondsSince1970:)),
            priceIncrease: renewal?.priceIncreaseStatus.map { $0 == 1 ? .accepted : .pending },
            lastTransactionID: transactionID, originalTransactionID: chain)
    }

    /// When a period ends (its purchase when it has no expiry), then its purchase and id: one order for all.
    private static func ends(_ signal: SubscriptionSignal) -> (Int64, Int64, String) {
        (signal.expiresAt ?? signal.purchasedAt ?? 0, signal.purchasedAt ?? 0, signal.transactionID ?? "")
    }

    private static let rank: [SubscriptionState: Int] = [
        .active: 4, .inGracePeriod: 3, .inBillingRetry: 2, .expired: 1, .revoked: 0,
    ]

    private static func ranks(_ status: UserSubscription, above other: UserSubscription) -> Bool {
        let mine = (rank[status.state] ?? 0, status.expiresAt ?? .distantPast, status.originalTransactionID)
        let theirs = (rank[other.state] ?? 0, other.expiresAt ?? .distantPast, other.originalTransactionID)
        return mine > theirs
    }
}
