import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func payment(channel: Channel, providerTransactionID: String) async throws -> RecordedPayment? {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT \(unsafeRaw: Self.paymentColumns) FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE p.channel = \(bind: channel.rawValue) AND p.provider_txn_id = \(bind: providerTransactionID)
                """
            ).first().map(Self.decodePayment)
        }
    }

    public func payment(_ query: PaymentQuery) async throws -> PaymentLookup {
        try await database.read(joining: write) { db in
            guard let row = try await db.sql(Self.lookup(query, locking: Self.locksOrders(db))).first() else {
                throw LedgerCorruption(detail: "a lookup of one row returned none")
            }
            return try Self.decodeLookup(row, query, in: db)
        }
    }

    /// The lookup of `query` as one row whatever is found: the payment's columns are NULL when it is not recorded,
    /// the named order's (``namedOrderColumns``) when there is none or none was asked. `locking`: the named order is
    /// locked (`FOR UPDATE`) as a payment of it would (``locksOrders(_:)``). `also`: more columns to select.
    static func lookup(_ query: PaymentQuery, locking: Bool = false, also columns: LedgerSQL? = nil) -> LedgerSQL {
        var lookup: LedgerSQL = """
            SELECT \(unsafeRaw: Self.paymentColumns), (
                SELECT c.user_id FROM payment_transactions c
                WHERE c.channel = \(bind: query.channel.rawValue) AND c.original_txn_id = \(bind: query.chainOf)
                ORDER BY c.id LIMIT 1) AS chain_owner,
                (SELECT COUNT(*) FROM inbox i WHERE i.chain = \(bind: query.chainOf) AND i.processed_at IS NULL) AS awaiting
            """
        if let columns { lookup += ", " + columns }
        if let order = query.order {
            let named: LedgerSQL =
                switch order {
                case .uuid(let uuid): " WHERE order_uuid = \(bind: uuid.text(lowercase: true))"
                case .number(let number): " WHERE order_no = \(bind: number)"
                }
            lookup += """
                , named.* FROM (SELECT 1 AS probe) AS probe
                LEFT JOIN (SELECT \(unsafeRaw: Self.namedOrderColumns) FROM orders
                """
            lookup += named + LedgerSQL(locking ? " FOR UPDATE) AS named ON TRUE" : ") AS named ON TRUE")
        } else {
            lookup += " FROM (SELECT 1 AS probe) AS probe"
        }
        return lookup + """

            LEFT JOIN payment_transactions p ON p.channel = \(bind: query.channel.rawValue) AND p.provider_txn_id = \(bind: query.providerTransactionID)
            LEFT JOIN orders o ON o.id = p.order_id
            """
    }

    /// Whether a read on `db` that a payment will rely on locks its order: in a write on PostgreSQL (SQLite's writer
    /// is alone, and a read outside a write locks nothing).
    static func locksOrders(_ db: any SQLDatabase) -> Bool {
        LedgerDatabase.heldOrders(db) != nil && db.dialect.name == "postgresql"
    }

    /// The row of `query`'s lookup (``lookup(_:locking:)``); a named order found in a write is held for its payment
    /// (``HeldOrders``).
    static func decodeLookup(_ row: any SQLRow, _ query: PaymentQuery, in db: any SQLDatabase) throws -> PaymentLookup {
        var namedOrder: Order?
        if query.order != nil, try !row.decodeNil(column: OrderColumns.named[.id]) {
            let (id, order, catalogVersionID) = try decodeOrderRow(row, .named)
            LedgerDatabase.heldOrders(db)?.add(.init(id: id, order: order, catalogVersionID: catalogVersionID))
            namedOrder = order
        }
        return PaymentLookup(
            payment: try row.decode(column: "provider_txn_id", as: String?.self) == nil ? nil : try decodePayment(row),
            chainOwner: try row.decode(column: "chain_owner", as: String?.self),
            signalsAwaitChain: try row.decode(column: "awaiting", as: Int64.self) > 0,
            namedOrder: namedOrder)
    }

    public func payments(orderNo: String) async throws -> [RecordedPayment] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT \(unsafeRaw: Self.paymentColumns) FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE o.order_no = \(bind: orderNo) ORDER BY p.id
                """
            ).all().map(Self.decodePayment)
        }
    }

    static let paymentColumns =
        "o.order_no, p.user_id, p.channel, p.provider_txn_id, p.amount_minor, p.currency, p.reversed_at"

    static func decodePayment(_ row: any SQLRow) throws -> RecordedPayment {
        guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
            let currency = CurrencyCode(try row.decode(column: "currency", as: String.self))
        else { throw LedgerCorruption(detail: "a payment row has a value this build does not know") }
        return RecordedPayment(
            orderNo: try row.decode(column: "order_no", as: String.self),
            userID: try row.decode(column: "user_id", as: String.self),
            channel: channel, providerTransactionID: try row.decode(column: "provider_txn_id", as: String.self),
            amount: Money(amountMinor: try row.decode(column: "amount_minor", as: Int64.self), currency: currency),
            reversedAt: try row.decode(column: "reversed_at", as: Int64?.self).map(Date.init(millisecondsSince1970:)))
    }

    public func transition(
        orderNo: String, from: Set<OrderStatus>, to: OrderStatus, cause: EventCause, evidence: String?, at date: Date
    ) async throws -> Order {
        try await database.transaction(joining: write) { db in
            guard let order = try await Self.loadOrder(db, where: "order_no", orderNo, forUpdate: true) else {
                throw LedgerError.unknownOrder(orderNo)
            }
            guard from.contains(order.status) else { return order }
            let orderID = try await Self.orderID(db, orderNo: orderNo)
            try await Self.setStatus(
                db, orderID: orderID, from: order.status, to: to, kind: .status(to), cause: cause, evidence: evidence,
                at: date)
            return try await Self.loadOrder(db, where: "id", orderID)!
        }
    }

    @discardableResult
    public func note(
        orderNo: String, kind: OrderEventKind, cause: EventCause, evidence: String?, at date: Date, atMost: Int?
    ) async throws -> Bool {
        try await database.transaction(joining: write) { db in
            let orderID = try await Self.orderID(db, orderNo: orderNo)
            if let atMost {
                let kept =
                    try await db.sql(
                        """
                        SELECT COUNT(*) AS n FROM order_events WHERE order_id = \(bind: orderID) AND cause = \(bind: cause.rawValue)
                        """
                    ).first()?.decode(column: "n", as: Int64.self) ?? 0
                guard kept < atMost else { return false }
            }
            try await Self.appendEvent(
                db, orderID: orderID, kind: kind, from: nil, to: nil, cause: cause, evidence: evidence, at: date)
            return true
        }
    }

    public func unpaidOrderCount(userID: String, since: Date) async throws -> Int {
        try await database.read(joining: write) { db in
            let row = try await db.sql(
                """
                SELECT COUNT(*) AS n FROM orders WHERE user_id = \(bind: userID) AND created_at >= \(bind: since.millisecondsSince1970)
                AND status IN (\(bind: OrderStatus.created.rawValue), \(bind: OrderStatus.paying.rawValue))
                """
            ).first()
            return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
        }
    }

    public func hasOrder(userID: String, idempotencyKey: String) async throws -> Bool {
        try await database.read(joining: write) { db in
            try await db.sql(
                "SELECT 1 AS one FROM orders WHERE user_id = \(bind: userID) AND idempotency_key = \(bind: idempotencyKey)"
            )
            .first() != nil
        }
    }

    static func orderID(_ db: any SQLDatabase, orderNo: String) async throws -> Int64 {
        guard let row = try await db.sql("SELECT id FROM orders WHERE order_no = \(bind: orderNo)").first() else {
            throw LedgerError.unknownOrder(orderNo)
        }
        return try row.decode(column: "id", as: Int64.self)
    }
}
