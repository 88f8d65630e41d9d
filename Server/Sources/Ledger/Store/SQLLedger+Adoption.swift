import Foundation
import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func fulfil(_ payment: VerifiedPayment, adopting new: NewOrder, as identity: OrderIdentity, at date: Date)
        async throws
        -> FulfilmentOutcome?
    {
        // An order adopted with a payment whose provider set the price is created at that price.
        var priced = new
        if payment.pricedByProvider { priced.amount = payment.amount }
        let new = priced
        return try await database.transaction(joining: write) { db in
            let order = Self.created(new, as: identity)
            let plan = OrderLifecycle.paying(order, with: payment)
            let reserved = LedgerDatabase.reservedPayment(db)?.take(for: payment)
            if let reserved, let ids = reserved.ids {
                // The order and its payment wait, with their grants and history, for the write's last statement.
                try await LedgerDatabase.change(
                    [
                        Self.orderInsert(
                            new, as: identity, id: ids.order, status: plan.status, updatedAt: date,
                            sandbox: payment.sandbox),
                        Self.paymentInsert(
                            payment, id: ids.payment, orderID: ids.order, userID: new.userID, at: date),
                    ], on: db, ownRows: true)
                try await Self.recordCreation(db, orderID: ids.order, order, new)
                return try await settle(
                    db, payment, paymentID: ids.payment, waiting: reserved.reversalWaits,
                    orderID: ids.order, order, catalogVersionID: new.catalogVersionID, plan, at: date)
            }
            // The order is inserted as the payment leaves it (never written twice), and only with its payment.
            let orderInsert = Self.orderInsert(
                new, as: identity, status: plan.status, updatedAt: date, sandbox: payment.sandbox)
            let orderID: Int64
            let paid: InsertedPayment?
            if db.dialect.name == "postgresql" {
                // One statement; the payment's reference to its order is checked at the statement's end.
                guard
                    let row = try await db.sql(
                        "WITH adopted AS (" + orderInsert + " RETURNING id), paid AS (INSERT INTO payment_transactions "
                            + Self.paymentInsertColumns + " SELECT "
                            + Self.paymentValues(payment, orderID: "adopted.id", userID: new.userID, at: date)
                            + " FROM adopted "
                            + Self.paymentConflict(payment)
                            + ") SELECT adopted.id AS order_id, paid.id, paid.waiting FROM adopted LEFT JOIN paid ON TRUE"
                    ).first()
                else { return nil }
                orderID = try row.decode(column: "order_id", as: Int64.self)
                paid = try InsertedPayment(row)
            } else {
                guard let id = try await db.insertedID(orderInsert) else { return nil }
                orderID = id
                paid = try await Self.insertPayment(
                    db, payment,
                    values: Self.paymentValues(payment, orderID: "\(bind: orderID)", userID: new.userID, at: date),
                    waiting: reserved?.reversalWaits)
            }
            guard let paid else {
                // Recorded before (another replica's submission of it, committed since the caller looked): the
                // order goes, unseen, and the caller creates and pays one apart, which says whose payment it is.
                try await db.sql("DELETE FROM orders WHERE id = \(bind: orderID)").run()
                return nil
            }
            try await Self.recordCreation(db, orderID: orderID, order, new)
            return try await settle(
                db, payment, paymentID: paid.id, waiting: paid.waiting, orderID: orderID, order,
                catalogVersionID: new.catalogVersionID, plan, at: date)
        }
    }
}
