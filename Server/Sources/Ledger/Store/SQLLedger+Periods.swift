import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func extendPeriod(
        channel: Channel, providerTransactionID: String, until end: Date, cause: EventCause, evidence: String,
        at date: Date
    ) async throws -> String? {
        try await database.transaction(joining: write) { db in
            guard
                let payment = try await db.sql(
                    """
                    SELECT p.id, p.order_id, p.user_id FROM payment_transactions p
                    WHERE p.channel = \(bind: channel.rawValue) AND p.provider_txn_id = \(bind: providerTransactionID) AND p.reversed_at IS NULL
                    """
                ).first()
            else { return nil }
            let paymentID = try payment.decode(column: "id", as: Int64.self)
            let userID = try payment.decode(column: "user_id", as: String.self)
            let endMS = end.millisecondsSince1970
            let moved = try await db.sql(
                """
                UPDATE grants SET provider_period_end = \(bind: endMS), expires_at = \(bind: endMS)
                WHERE payment_transaction_id = \(bind: paymentID) AND reversed_at IS NULL
                  AND provider_period_end IS NOT NULL AND provider_period_end < \(bind: endMS)
                RETURNING target
                """
            ).all().map { try $0.decode(column: "target", as: String.self) }
            guard !moved.isEmpty else { return nil }
            for target in moved {
                try await db.sql(
                    """
                    UPDATE entitlements SET expires_at = \(bind: endMS), updated_at = \(bind: date.millisecondsSince1970)
                    WHERE user_id = \(bind: userID) AND name = \(bind: target) AND expires_at IS NOT NULL AND expires_at < \(bind: endMS)
                    """
                ).run()
            }
            let orderID = try payment.decode(column: "order_id", as: Int64.self)
            try await Self.appendEvent(
                db, orderID: orderID, kind: .periodExtended, from: nil, to: nil, cause: cause,
                evidence: "\(channel.rawValue):\(providerTransactionID) until \(endMS) \(evidence)", at: date)
            return try await db.sql("SELECT order_no FROM orders WHERE id = \(bind: orderID)").first()?.decode(
                column: "order_no", as: String.self)
        }
    }
}
