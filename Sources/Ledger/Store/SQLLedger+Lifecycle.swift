import Foundation
import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func payment(channel: Channel, providerTransactionID: String) async throws -> RecordedPayment? {
        try await database.withSession { db in
            try await db.raw("""
                SELECT o.order_no, p.user_id FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE p.channel = \(bind: channel.rawValue) AND p.provider_txn_id = \(bind: providerTransactionID)
                """).first().map { row in
                RecordedPayment(
                    orderNo: try row.decode(column: "order_no", as: String.self), userID: try row.decode(column: "user_id", as: String.self))
            }
        }
    }

    public func transition(
        orderNo: String, from: Set<OrderStatus>, to: OrderStatus, cause: EventCause, evidence: String?, at date: Date
    ) async throws -> Order {
        try await database.transaction { db in
            guard let order = try await Self.loadOrder(db, where: "order_no", orderNo, forUpdate: true) else {
                throw LedgerError.unknownOrder(orderNo)
            }
            guard from.contains(order.status) else { return order }
            let orderID = try await Self.orderID(db, orderNo: orderNo)
            try await Self.setStatus(db, orderID: orderID, from: order.status, to: to, kind: to.rawValue, cause: cause, evidence: evidence, at: date)
            return try await Self.loadOrder(db, where: "id", orderID)!
        }
    }

    public func note(orderNo: String, kind: String, cause: EventCause, evidence: String?, at date: Date) async throws {
        try await database.withSession { db in
            let orderID = try await Self.orderID(db, orderNo: orderNo)
            try await Self.appendEvent(db, orderID: orderID, kind: kind, from: nil, to: nil, cause: cause, evidence: evidence, at: date)
        }
    }

    static func orderID(_ db: any SQLDatabase, orderNo: String) async throws -> Int64 {
        guard let row = try await db.raw("SELECT id FROM orders WHERE order_no = \(bind: orderNo)").first() else {
            throw LedgerError.unknownOrder(orderNo)
        }
        return try row.decode(column: "id", as: Int64.self)
    }
}
