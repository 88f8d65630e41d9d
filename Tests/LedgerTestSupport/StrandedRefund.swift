import Ledger
import SQLKit

extension LedgerDatabase {
    /// Leaves a refund waiting beside a payment that is already recorded: what a refund and its payment recorded at
    /// once on two PostgreSQL replicas can leave behind (one writer never does, so tests write it directly).
    public func leaveStrandedRefund(channel: String, providerTransactionID: String) async throws {
        try await transaction { db in
            try await db.raw("""
                INSERT INTO waiting_reversals (channel, provider_txn_id, kind, cause, evidence, received_at)
                VALUES (\(bind: channel), \(bind: providerTransactionID), 'refunded', 'notification', 'inbox:7', 0)
                """).run()
        }
    }
}
