import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// One page of orders, newest first (created time, then row id), after `query.after`. Keyset pagination: each
    /// filter has an index that starts with it and ends with `(created_at, id)`, so a page costs the same at the
    /// millionth order as at the first.
    public func orders(_ query: OrderQuery) async throws -> OrderPage {
        let limit = min(max(query.limit, 1), OrderQuery.maxLimit)
        return try await database.read(joining: write) { db in
            var conditions: [LedgerSQL] = []
            if let search = query.search {
                let ids = try await Self.orderIDs(matching: search, db)
                if ids.isEmpty {
                    conditions.append("o.user_id = \(bind: search)")
                } else {
                    conditions.append("o.id IN (\(binds: ids))")
                }
            }
            if let userID = query.userID { conditions.append("o.user_id = \(bind: userID)") }
            if let status = query.status { conditions.append("o.status = \(bind: status.rawValue)") }
            if let channel = query.channel { conditions.append("o.channel = \(bind: channel.rawValue)") }
            if let productID = query.productID { conditions.append("o.product_id = \(bind: productID)") }
            if let from = query.createdFrom { conditions.append("o.created_at >= \(bind: from.millisecondsSince1970)") }
            if let before = query.createdBefore {
                conditions.append("o.created_at < \(bind: before.millisecondsSince1970)")
            }
            if let after = query.after {
                conditions.append("(o.created_at, o.id) < (\(bind: after.createdAt), \(bind: after.id))")
            }
            var sql: LedgerSQL = "SELECT \(unsafeRaw: Self.qualifiedOrderColumns) FROM orders o"
            if !conditions.isEmpty {
                sql += " WHERE "
                sql += conditions.joined(separator: " AND ")
            }
            sql += " ORDER BY o.created_at DESC, o.id DESC LIMIT \(bind: limit + 1)"
            let rows = try await db.sql(sql).all()
            let orders = try rows.prefix(limit).map(Self.decodeOrder)
            var next: OrderCursor?
            if rows.count > limit, let last = rows.prefix(limit).last {
                next = OrderCursor(
                    createdAt: try last.decode(column: "created_at", as: Int64.self),
                    id: try last.decode(column: "id", as: Int64.self))
            }
            return OrderPage(orders: orders, next: next)
        }
    }

    /// ``orderColumns`` of the table aliased `o`.
    static let qualifiedOrderColumns = orderColumns.split(separator: ",").map {
        "o." + $0.trimmingCharacters(in: .whitespaces)
    }
    .joined(separator: ", ")

    /// The channels the ledger holds payments of, as SQL text: a transaction id is searched in each, through the
    /// unique (channel, provider_txn_id) index.
    private static let everyChannel = Channel.builtIn.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    /// The rows of the orders a search text names exactly: an order number or UUID (the `appAccountToken` an app
    /// bought with), or a provider's transaction id or original transaction id (a subscription chain: every order of
    /// it, at most 1,000).
    static func orderIDs(matching text: String, _ db: any SQLDatabase) async throws -> [Int64] {
        let uuid = UUID(uuidString: text)?.uuidString.lowercased() ?? ""
        return try await db.sql(
            """
            SELECT id FROM orders WHERE order_no = \(bind: text) OR order_uuid = \(bind: uuid)
            UNION SELECT order_id AS id FROM payment_transactions
                WHERE channel IN (\(unsafeRaw: Self.everyChannel)) AND provider_txn_id = \(bind: text)
            UNION SELECT order_id AS id FROM payment_transactions WHERE original_txn_id = \(bind: text)
            LIMIT 1000
            """
        ).all().map { try $0.decode(column: "id", as: Int64.self) }
    }
}
