import Foundation
import Ledger
import OrderSafeModel

extension AppStorePayments {
    /// A subscription's state now, from what its chain's signals say; nil for no chain, or no transaction of it.
    func subscription(chain: String?, in ledger: any LedgerWrite) async throws -> UserSubscription? {
        guard let chain else { return nil }
        let signals = try await ledger.subscriptionSignals(chain: chain)
        return SubscriptionFold.statuses(signals, at: context.clock.now()).first
    }

    /// A timeline event and a merchant webhook when the subscription of `chain` is no longer `before`, on the order
    /// of its latest period; nothing when that order is not recorded yet (its owner is not known).
    func announceChange(
        of chain: String?, from before: UserSubscription?, cause: EventCause, evidence: String,
        in ledger: any LedgerWrite
    ) async throws {
        guard let after = try await subscription(chain: chain, in: ledger), after != before,
            let payment = try await ledger.payment(
                channel: .appStore, providerTransactionID: after.lastTransactionID)
        else { return }
        try await ledger.subscriptionChanged(
            orderNo: payment.orderNo, to: after, cause: cause, evidence: evidence, at: context.clock.now())
    }

    /// Keeps what an app's submission or a history pull says of its subscription, after the payment is committed,
    /// and announces the chain's state when it changed — or whenever the chain just gained its owner: what
    /// notifications said before anyone owned it was never announced. A failure is logged: the signal comes again
    /// with the next notification or pull.
    func keep(_ signal: SubscriptionSignal, chainGainedOwner: Bool, cause: EventCause, evidence: String) async {
        do {
            let before = chainGainedOwner ? nil : try await subscription(chain: signal.chain, in: context.ledger)
            try await context.ledger.recordSubscriptionSignal(signal)
            try await announceChange(
                of: signal.chain, from: before, cause: cause, evidence: evidence, in: context.ledger)
        } catch {
            context.logger.warning(
                "subscription signal of a recorded transaction not kept",
                metadata: ["transaction_id": "\(signal.transactionID ?? "-")", "error": "\(error)"])
        }
    }
}
