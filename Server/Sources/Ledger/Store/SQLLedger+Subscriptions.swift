import Foundation
import SQLKit

extension SQLLedger {
    public func recordSubscriptionSignal(_ signal: SubscriptionSignal) async throws {
        let body = signal.stored
        try await database.transaction(joining: write) { db in
            // The same rule as SubscriptionSignal.supersedes: later signedDate, then the greater text.
            try await db.raw(
                """
                INSERT INTO subscription_signals (chain, kind, signal_key, signed_at, body)
                VALUES (\(bind: signal.chain), \(bind: signal.kind.rawValue), \(bind: signal.key), \(bind: signal.signedAt), \(bind: body))
                ON CONFLICT (chain, kind, signal_key) DO UPDATE SET signed_at = excluded.signed_at, body = excluded.body
                WHERE excluded.signed_at > subscription_signals.signed_at
                   OR (excluded.signed_at = subscription_signals.signed_at AND excluded.body > subscription_signals.body)
                """
            ).run()
        }
    }

    public func subscriptionSignals(userID: String) async throws -> [SubscriptionSignal] {
        try await database.read(joining: write) { db in
            try await db.raw(
                """
                SELECT body FROM subscription_signals WHERE chain IN (
                    SELECT p.original_txn_id FROM orders o JOIN payment_transactions p ON p.order_id = o.id
                    WHERE o.user_id = \(bind: userID) AND p.channel = 'appstore' AND p.original_txn_id IS NOT NULL)
                ORDER BY chain, kind, signal_key
                LIMIT \(bind: SubscriptionSignal.maxPerUser)
                """
            ).all().map { row in
                let body = try row.decode(column: "body", as: String.self)
                return try JSONDecoder().decode(SubscriptionSignal.self, from: Data(body.utf8))
            }
        }
    }
}
