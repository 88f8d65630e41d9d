import AppStore
import Ledger

/// What a verified notification says of an auto-renewable subscription, as the ledger keeps it: its transaction
/// and its renewal information, each dated by Apple's `signedDate`. Other notifications say nothing here.
enum SubscriptionSignals {
    static func of(_ notification: AppStoreNotification) -> [SubscriptionSignal] {
        guard let transaction = notification.transaction, transaction.type == .autoRenewableSubscription else {
            return []
        }
        var signals: [SubscriptionSignal] = []
        if let signal = Self.transaction(transaction) { signals.append(signal) }
        if let info = notification.renewalInfo,
            let chain = info.originalTransactionId ?? transaction.originalTransactionId,
            let signal = renewal(info, chain: chain)
        {
            signals.append(signal)
        }
        return signals
    }

    static func transaction(_ transaction: JWSTransaction) -> SubscriptionSignal? {
        guard let chain = transaction.originalTransactionId, let id = transaction.transactionId,
            let signedAt = transaction.signedDate
        else { return nil }
        var signal = SubscriptionSignal(chain: chain, kind: .transaction, signedAt: signedAt)
        signal.transactionID = id
        signal.groupID = transaction.subscriptionGroupIdentifier
        signal.productID = transaction.productId
        signal.purchasedAt = transaction.purchaseDate
        signal.expiresAt = transaction.expiresDate
        signal.revokedAt = transaction.revocationDate
        signal.upgraded = transaction.isUpgraded
        return signal
    }

    static func renewal(_ info: JWSRenewalInfo, chain: String) -> SubscriptionSignal? {
        guard let signedAt = info.signedDate else { return nil }
        var signal = SubscriptionSignal(chain: chain, kind: .renewal, signedAt: signedAt)
        signal.autoRenew = info.autoRenewStatus.map { $0 == 1 }
        signal.renewalProductID = info.autoRenewProductId
        signal.expirationIntent = info.expirationIntent
        signal.inBillingRetry = info.isInBillingRetryPeriod
        signal.gracePeriodEndsAt = info.gracePeriodExpiresDate
        signal.priceIncreaseStatus = info.priceIncreaseStatus
        return signal
    }
}
