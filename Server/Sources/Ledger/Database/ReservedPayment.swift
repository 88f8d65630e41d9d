import OrderSafeModel
import SQLKit
import Synchronization

/// The ids PostgreSQL handed a write ahead for the order and payment it may record for one provider transaction, and
/// whether a reversal waited for that transaction then: asked with the write's first statement (an App Store
/// submission's entry and lookup), so that its payment and the order it pays (its new status) or adopts (its row)
/// go to the database with the grants and history, as one statement at the write's end, where they were a statement
/// of their own before it.
///
/// The payment's insert then has no `ON CONFLICT`: should another transaction record the same provider transaction
/// meanwhile, the unique key fails the write's last statement, and the write runs again from its start
/// (``LedgerDatabase/isTransient(_:)``), whose lookup then finds the payment recorded. A reversal recorded after the
/// ids were handed out is applied by the inbox sweep, as one that passed its payment is.
struct ReservedPayment: Sendable {
    let orderID: Int64
    let paymentID: Int64
    let channel: Channel
    let providerTransactionID: String
    let reversalWaits: Bool

    /// The columns a lookup of `channel`'s `providerTransactionID` selects to reserve them (``init(_:_:)`` reads them).
    static func columns(_ channel: Channel, _ providerTransactionID: String) -> LedgerSQL {
        """
        nextval(pg_get_serial_sequence('orders', 'id')) AS reserved_order_id,
        nextval(pg_get_serial_sequence('payment_transactions', 'id')) AS reserved_payment_id,
        (SELECT COUNT(*) FROM waiting_reversals w
         WHERE w.channel = \(bind: channel.rawValue) AND w.provider_txn_id = \(bind: providerTransactionID)) AS reserved_waiting
        """
    }

    init(_ row: any SQLRow, _ query: PaymentQuery) throws {
        orderID = try row.decode(column: "reserved_order_id", as: Int64.self)
        paymentID = try row.decode(column: "reserved_payment_id", as: Int64.self)
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
        (db as? WriteConnection)?.reservedPayment
    }
}
