import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// A payment whose provider transaction is recorded already (its insert changed nothing): for this same order a
    /// resend, nothing to do; for another order a conflict (invariant 2), never a quiet success. The claim is kept
    /// once per transaction and order, and the order it claims to pay is flagged with both orders named: the provider
    /// says this order was paid, the ledger says that payment belongs to another, and a human decides which is true.
    static func recordedBefore(
        _ db: any SQLDatabase, _ payment: VerifiedPayment, orderID: Int64, _ order: Order, at date: Date
    ) async throws -> FulfilmentOutcome {
        guard
            let existing = try await db.sql(
                """
                SELECT p.order_id, o.order_no FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE p.channel = \(bind: payment.channel.rawValue) AND p.provider_txn_id = \(bind: payment.providerTransactionID)
                """
            ).first()
        else {
            throw LedgerCorruption(
                detail:
                    "payment \(payment.channel.rawValue):\(payment.providerTransactionID) was neither inserted nor found"
            )
        }
        let recordedOrderID = try existing.decode(column: "order_id", as: Int64.self)
        let recordedOrderNo = try existing.decode(column: "order_no", as: String.self)
        guard recordedOrderID != orderID else { return .duplicate(orderNo: order.orderNo) }
        let claimed = try await db.sql(
            """
            INSERT INTO payment_conflicts (channel, provider_txn_id, order_id, recorded_order_id, amount_minor, currency, cause, evidence,
                                           created_at)
            VALUES (\(bind: payment.channel.rawValue), \(bind: payment.providerTransactionID), \(bind: orderID), \(bind: recordedOrderID),
                    \(bind: payment.amount.amountMinor), \(bind: payment.amount.currency.code), \(bind: payment.cause.rawValue),
                    \(bind: payment.evidence), \(bind: date.millisecondsSince1970))
            ON CONFLICT (order_id, channel, provider_txn_id) DO NOTHING
            RETURNING id
            """
        ).first()
        // claimed before: flagged then
        guard claimed != nil else { return .conflict(order, recordedFor: recordedOrderNo) }
        let flagged = try await advance(
            db, orderID: orderID, order, through: [(.flagged(.paymentIDConflict), .flagged)],
            cause: payment.cause,
            evidence:
                "\(payment.channel.rawValue):\(payment.providerTransactionID) \(payment.evidence) recorded for order \(recordedOrderNo)",
            at: date)
        return .conflict(flagged, recordedFor: recordedOrderNo)
    }
}
