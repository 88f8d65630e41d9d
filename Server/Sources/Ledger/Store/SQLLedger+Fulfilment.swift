import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func fulfil(_ payment: VerifiedPayment, at date: Date) async throws -> FulfilmentOutcome {
        try await database.transaction(joining: write) { db in
            guard let (orderID, unpaid, catalogVersionID) = try await Self.orderToFulfil(db, orderNo: payment.orderNo)
            else {
                throw LedgerError.unknownOrder(payment.orderNo)
            }
            let plan = OrderLifecycle.paying(unpaid, with: payment)
            let reserved = LedgerDatabase.reservedPayment(db)?.take(for: payment)
            if let reserved, let ids = reserved.ids {
                // The payment and the order's new status wait, with the grants and history, for the write's last
                // statement.
                try await LedgerDatabase.change(
                    [
                        Self.paymentInsert(
                            payment, id: ids.payment, orderID: orderID, userID: unpaid.userID, at: date),
                        Self.statusUpdate(
                            orderID: orderID, to: plan.status, sandbox: payment.sandbox, amount: plan.amount, at: date),
                    ], on: db, ownRows: true)
                return try await settle(
                    db, payment, paymentID: ids.payment, waiting: reserved.reversalWaits, orderID: orderID,
                    plan.priced(unpaid), catalogVersionID: catalogVersionID, plan, at: date)
            }
            // The unique (channel, provider_txn_id) constraint is what makes fulfilment exactly-once:
            // a concurrent or replayed insert of the same provider transaction finds the row and changes nothing.
            let values = Self.paymentValues(payment, orderID: "\(bind: orderID)", userID: unpaid.userID, at: date)
            // The order's new status is written only if the payment was (on PostgreSQL in the same statement).
            let update = Self.statusUpdate(
                orderID: orderID, to: plan.status, sandbox: payment.sandbox, amount: plan.amount, at: date)
            let paid: InsertedPayment?
            if db.dialect.name == "postgresql" {
                paid = try InsertedPayment(
                    try await db.sql(
                        "WITH paid AS (INSERT INTO payment_transactions " + Self.paymentInsertColumns + " VALUES ("
                            + values + ") " + Self.paymentConflict(payment) + "), advanced AS (" + update
                            + " AND EXISTS (SELECT 1 FROM paid)) SELECT id, waiting FROM paid"
                    ).first())
            } else {
                paid = try await Self.insertPayment(db, payment, values: values, waiting: reserved?.reversalWaits)
                if paid != nil { try await db.sql(update).run() }
            }
            guard let paid else {
                return try await Self.recordedBefore(db, payment, orderID: orderID, unpaid, at: date)
            }
            let order = plan.priced(unpaid)
            return try await settle(
                db, payment, paymentID: paid.id, waiting: paid.waiting, orderID: orderID, order,
                catalogVersionID: catalogVersionID,
                plan, at: date)
        }
    }

    /// A payment's row as its insert answers it: its id, and whether a reversal waits for it.
    struct InsertedPayment {
        let id: Int64
        let waiting: Bool

        init(id: Int64, waiting: Bool) {
            self.id = id
            self.waiting = waiting
        }

        /// The row of ``paymentConflict(_:)``'s `RETURNING`, nil when there is none or its id is NULL.
        init?(_ row: (any SQLRow)?) throws {
            guard let row, try !row.decodeNil(column: "id") else { return nil }
            self.init(
                id: try row.decode(column: "id", as: Int64.self),
                waiting: try row.decode(column: "waiting", as: Int64.self) > 0)
        }
    }

    /// A payment inserted on SQLite with `values` (``paymentValues(_:orderID:userID:at:)``), nil when its provider
    /// transaction was recorded before; then whether a reversal waits for it: `waiting` when the write's lookup
    /// asked (``ReservedPayment``), else asked apart. Not with `RETURNING`:
    /// SQLite runs one as a trigger that fills an ephemeral table, and the insert then keeps a statement journal, a
    /// copy of every page it changes (the row's and its indexes'), five allocations a page: without it a fresh
    /// submission's statement journal went from 31 allocations to 10 (a uprobe on `malloc` under load), its
    /// allocations from 195 to 175.
    static func insertPayment(
        _ db: any SQLDatabase, _ payment: VerifiedPayment, values: LedgerSQL, waiting known: Bool? = nil
    ) async throws -> InsertedPayment? {
        guard
            let id = try await db.insertedID(
                "INSERT INTO payment_transactions " + paymentInsertColumns + " VALUES (" + values
                    + ") ON CONFLICT (channel, provider_txn_id) DO NOTHING")
        else { return nil }
        if let known { return InsertedPayment(id: id, waiting: known) }
        let waiting = try await db.sql(
            """
            SELECT EXISTS (SELECT 1 FROM waiting_reversals
                           WHERE channel = \(bind: payment.channel.rawValue) AND provider_txn_id = \(bind: payment.providerTransactionID)
                          ) AS waiting
            """
        ).first()?.decode(column: "waiting", as: Int64.self)
        return InsertedPayment(id: id, waiting: (waiting ?? 0) != 0)
    }

    static let paymentInsertColumns = LedgerSQL("(" + paymentColumnNames + ")")
    private static let paymentColumnNames =
        "channel, provider_txn_id, order_id, user_id, amount_minor, currency, cause, evidence, recorded_at, original_txn_id, offer"

    /// The insert of a payment whose id PostgreSQL reserved (``ReservedPayment``), for the order `orderID`: its
    /// provider transaction recorded before fails it.
    static func paymentInsert(_ payment: VerifiedPayment, id: Int64, orderID: Int64, userID: String, at date: Date)
        -> LedgerSQL
    {
        LedgerSQL("INSERT INTO payment_transactions (id, " + paymentColumnNames + ") OVERRIDING SYSTEM VALUE VALUES (")
            + "\(bind: id), " + paymentValues(payment, orderID: "\(bind: orderID)", userID: userID, at: date) + ")"
    }

    /// The values of a payment's row, in ``paymentInsertColumns``' order; `orderID` is an expression.
    static func paymentValues(_ payment: VerifiedPayment, orderID: LedgerSQL, userID: String, at date: Date)
        -> LedgerSQL
    {
        "\(bind: payment.channel.rawValue), \(bind: payment.providerTransactionID), " + orderID + """
            , \(bind: userID), \(bind: payment.amount.amountMinor), \(bind: payment.amount.currency.code), \(bind: payment.cause.rawValue), \
            \(bind: payment.evidence), \(bind: date.millisecondsSince1970), \(bind: payment.originalTransactionID), \
            \(bind: payment.offer)
            """
    }

    /// The end of a payment's insert on PostgreSQL: a provider transaction recorded before inserts nothing; one
    /// inserted answers its id and whether a reversal waits for it (asked with the insert: one statement fewer for the
    /// payments nothing waits for).
    static func paymentConflict(_ payment: VerifiedPayment) -> LedgerSQL {
        """
        ON CONFLICT (channel, provider_txn_id) DO NOTHING
        RETURNING id, (SELECT COUNT(*) FROM waiting_reversals w
                       WHERE w.channel = \(bind: payment.channel.rawValue) AND w.provider_txn_id = \(bind: payment.providerTransactionID)
                      ) AS waiting
        """
    }

    /// The rest of a payment recorded against `order`, whose row already has the plan's status: grants (none when
    /// flagged), events and webhooks, and a refund or revocation that arrived before the payment, which wins now.
    func settle(
        _ db: any SQLDatabase, _ payment: VerifiedPayment, paymentID: Int64, waiting: Bool, orderID: Int64,
        _ order: Order,
        catalogVersionID: Int64, _ plan: PaymentPlan, at date: Date
    ) async throws -> FulfilmentOutcome {
        let evidence = "\(payment.channel.rawValue):\(payment.providerTransactionID) \(payment.evidence)"
        if let flag = plan.flag {
            let flagged = try await Self.advance(
                db, orderID: orderID, order, through: plan.steps, sandbox: payment.sandbox, updated: true,
                cause: payment.cause,
                evidence: evidence, at: date)
            return .flagged(flagged, flag)
        }
        let grants = try await products.grants(catalogVersionID: catalogVersionID, productID: order.productID) {
            try await Self.productGrants(db, orderID: orderID)
        }
        for (index, grant) in grants.enumerated() {
            try await Self.apply(
                grant, index: index, paymentID: paymentID, userID: order.userID,
                periodEnd: payment.periodEnd?.millisecondsSince1970,
                db: db, at: date)
        }
        let fulfilled = try await Self.advance(
            db, orderID: orderID, order, through: plan.steps, sandbox: payment.sandbox, updated: true,
            cause: payment.cause,
            evidence: evidence, at: date)
        if waiting,
            let reversal = try await Self.takeWaiting(db, payment.channel, payment.providerTransactionID, kind: nil)
        {
            switch try await Self.reverse(db, paymentID: paymentID, reversal, at: date) {
            case .flagged(let order, let reason): return .flagged(order, reason)
            default: return .fulfilled(try await Self.loadOrder(db, where: "id", orderID) ?? fulfilled)
            }
        }
        return .fulfilled(fulfilled)
    }

    /// The order a payment is for, locked: one this write has just created or read locked is passed on, not read
    /// again.
    private static func orderToFulfil(_ db: any SQLDatabase, orderNo: String) async throws -> (
        id: Int64, order: Order, catalogVersionID: Int64
    )? {
        if let held = LedgerDatabase.heldOrders(db)?.take(orderNo: orderNo) {
            return (held.id, held.order, held.catalogVersionID)
        }
        return try await loadOrderRow(db, where: "order_no", orderNo, forUpdate: true)
    }

    public func holdings(userID: String, at date: Date) async throws -> HoldingsResponse {
        try await database.read(joining: write) { db in
            let balances = try await db.sql(
                """
                SELECT name, amount FROM balances WHERE user_id = \(bind: userID) ORDER BY name
                """
            ).all().map { row in
                Balance(
                    name: try row.decode(column: "name", as: String.self),
                    amount: try row.decode(column: "amount", as: Int64.self))
            }
            let now = date.millisecondsSince1970
            let entitlements = try await db.sql(
                """
                SELECT name, expires_at FROM entitlements WHERE user_id = \(bind: userID) ORDER BY name
                """
            ).all().map { row in
                let expires = try row.decode(column: "expires_at", as: Int64?.self)
                return Entitlement(
                    name: try row.decode(column: "name", as: String.self),
                    expiresAt: expires.map(Date.init(millisecondsSince1970:)), active: expires.map { $0 > now } ?? true)
            }
            return HoldingsResponse(userID: userID, balances: balances, entitlements: entitlements)
        }
    }

    private static func productGrants(_ db: any SQLDatabase, orderID: Int64) async throws -> [Grant] {
        guard
            let row = try await db.sql(
                """
                SELECT p.definition FROM orders o
                JOIN products p ON p.catalog_version_id = o.catalog_version_id AND p.product_id = o.product_id
                WHERE o.id = \(bind: orderID)
                """
            ).first()
        else { throw LedgerCorruption(detail: "order \(orderID) has no product definition") }
        let definition = try row.decode(column: "definition", as: String.self)
        return try OrderSafeJSON.decoder().decode(CatalogProduct.self, from: Data(definition.utf8)).grants
    }

    static func setStatus(
        _ db: any SQLDatabase, orderID: Int64, from: OrderStatus, to: OrderStatus, kind: OrderEventKind,
        cause: EventCause,
        evidence: String?, at date: Date
    ) async throws {
        try await db.sql(
            """
            UPDATE orders SET status = \(bind: to.rawValue), updated_at = \(bind: date.millisecondsSince1970)
            WHERE id = \(bind: orderID)
            """
        ).run()
        LedgerDatabase.orderChanged(id: orderID, on: db)
        try await appendEvent(
            db, orderID: orderID, kind: kind, from: from, to: to, cause: cause, evidence: evidence, at: date)
        try await emitWebhook(db, orderID: orderID, cause: cause, evidence: evidence, at: date)
    }

    /// Applies one grant of a payment and records it (on PostgreSQL, the change and its record are one statement,
    /// held until the write's next statement: at the end of a submission, with its events).
    /// `periodEnd` (milliseconds) is the provider's own end of the period bought: an extension then runs until the
    /// later of it and the current end.
    static func apply(
        _ grant: Grant, index: Int, paymentID: Int64, userID: String, periodEnd: Int64?, db: any SQLDatabase,
        at date: Date
    ) async throws {
        let now = date.millisecondsSince1970
        var amount: Int64?
        var period: String?
        var expiresAt: Int64?
        var change: LedgerSQL?
        switch grant {
        case .addBalance(let name, let units):
            amount = units
            change = """
                INSERT INTO balances (user_id, name, amount, updated_at)
                VALUES (\(bind: userID), \(bind: name), \(bind: units), \(bind: now))
                ON CONFLICT (user_id, name) DO UPDATE SET amount = balances.amount + excluded.amount, updated_at = excluded.updated_at
                """
        case .unlockEntitlement(let name):
            change = """
                INSERT INTO entitlements (user_id, name, expires_at, updated_at)
                VALUES (\(bind: userID), \(bind: name), NULL, \(bind: now))
                ON CONFLICT (user_id, name) DO UPDATE SET expires_at = NULL, updated_at = excluded.updated_at
                """
        case .extendEntitlement(let name, let grantPeriod):
            period = grantPeriod.description
            let current = try await db.sql(
                """
                SELECT expires_at FROM entitlements WHERE user_id = \(bind: userID) AND name = \(bind: name)
                """
            ).first()
            if let current, try current.decodeNil(column: "expires_at") {
                break  // already unlocked for good: nothing to extend
            }
            let currentEnd = try current?.decode(column: "expires_at", as: Int64.self)
            let end =
                if let periodEnd { max(currentEnd ?? periodEnd, periodEnd) } else {
                    grantPeriod.adding(to: Date(millisecondsSince1970: max(now, currentEnd ?? now)))
                        .millisecondsSince1970
                }
            expiresAt = periodEnd ?? end
            change = """
                INSERT INTO entitlements (user_id, name, expires_at, updated_at)
                VALUES (\(bind: userID), \(bind: name), \(bind: end), \(bind: now))
                ON CONFLICT (user_id, name) DO UPDATE SET expires_at = excluded.expires_at, updated_at = excluded.updated_at
                """
        }
        let record: LedgerSQL = """
            INSERT INTO grants (payment_transaction_id, grant_index, user_id, kind, target, amount, period, expires_at,
                                provider_period_end, created_at)
            VALUES (\(bind: paymentID), \(bind: index), \(bind: userID), \(bind: grant.kind.rawValue), \(bind: grant.target),
                    \(bind: amount), \(bind: period), \(bind: expiresAt), \(bind: period == nil ? nil : periodEnd), \(bind: now))
            """
        try await LedgerDatabase.change([change, record].compactMap { $0 }, on: db)
    }
}
