import Ledger
import SQLKit

extension LedgerDatabase {
    /// Leaves a reversal (`refunded`, or `reinstated` for a `REFUND_REVERSED`) waiting beside a payment that is already
    /// recorded: what two signals about one payment recorded at once on two PostgreSQL replicas can leave behind (one
    /// writer never does, so tests write it directly).
    public func leaveWaitingReversal(_ kind: String = "refunded", channel: String, providerTransactionID: String)
        async throws
    {
        try await transaction { db in
            try await db.raw(
                """
                INSERT INTO waiting_reversals (channel, provider_txn_id, kind, cause, evidence, received_at)
                VALUES (\(bind: channel), \(bind: providerTransactionID), \(bind: kind), 'notification', 'inbox:7', 0)
                """
            ).run()
        }
    }
}
