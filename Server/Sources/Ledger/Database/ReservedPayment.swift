import OrderSafeModel
import SQLKit
import Synchronization

/// What a write's first statement (an App Store submission's entry and lookup) learnt ahead for the payment the write
/// may record for one provider transaction: whether a reversal waited for that transaction then, and on PostgreSQL
/// the ids it handed out for the order and the payment, so that the payment and the order it pays (its new status) or
/// adopts (its row) go to the database with the grants and history, as one statement at the write's end, where they
/// were a statement of their own before it. SQLite numbers its own rows; there the payment's insert only skips asking
/// whether a reversal waits (its writer is alone: nothing records one between the lookup and the insert).
///
/// The payment's insert then has no `ON CONFLICT` on PostgreSQL: should another transaction record the same provider
/// transaction meanwhile, the unique key fails the write's last statement, and the write runs again from its start
/// (``LedgerDatabase/isTransient(_:)``), whose lookup then finds the payment recorded. A reversal recorded after the
/// lookup is applied by the inbox sweep, as one that passed its payment is.
struct ReservedPayment: Sendable {
    /// The ids PostgreSQL handed out for the order and the payment; nil on SQLite.
    let ids: (order: Int64, payment: Int64)?
    let channel: Channel
    let providerTransactionID: String
    let reversalWaits: Bool

    /// The columns a lookup of `channel`'s `providerTransactionID` selects (``init(_:_:reservingIDs:)`` reads them):
    /// whether a reversal waits for it, and when `reservingIDs` (PostgreSQL) the two ids.
    static func columns(_ channel: Channel, _ providerTransactionID: String, reservingIDs: Bool) -> LedgerSQL {
        let waiting: LedgerSQL = """
            (SELECT COUNT(*) FROM waiting_reversals w
             WHERE w.channel = \(bind: channel.rawValue) AND w.provider_txn_id = \(bind: providerTransactionID)) AS reserved_waiting
            """
        guard reservingIDs else { return waiting }
        return """
            nextval(pg_get_serial_sequence('orders', 'id')) AS reserved_order_id,
            nextval(pg_get_serial_sequence('payment_transactions', 'id')) AS reserved_payment_id,
            """ + waiting
    }

    init(_ row: any SQLRow, _ query: PaymentQuery, reservingIDs: Bool) throws {
        ids =
            reservingIDs
            ? (
                try row.decode(column: "reserved_order_id", as: Int64.self),
                try row.decode(column: "reserved_payment_id", as: Int64.self)
            ) : nil
        channel = query.channel
        providerTransactionID = query.providerTransactionID
        reversalWaits = try row.decode(column: "reserved_waiting", as: Int64.self) > 0
    }

    /// A write's reservation, taken once by the payment it was made for.
    final class Slot: Sendable {
        private let reserved = Mutex<ReservedPayment?>(nil)

        func keep(_ reservation: ReservedPayment) {
            reserved.withLock { $0 = reservation }
        }

        func take(for payment: VerifiedPayment) -> ReservedPayment? {
            reserved.withLock { reserved in
                guard let found = reserved, found.channel == payment.channel,
                    found.providerTransactionID == payment.providerTransactionID
                else { return nil }
                reserved = nil
                return found
            }
        }
    }
}

extension LedgerDatabase {
    /// The reservation of the write `db` is the connection of; nil outside a write.
    static func reservedPayment(_ db: any SQLDatabase) -> ReservedPayment.Slot? {
        db.exactly(WriteConnection.self)?.reservedPayment
    }
}
