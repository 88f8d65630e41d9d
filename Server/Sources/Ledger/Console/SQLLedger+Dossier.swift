import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// An order with its history: a page of its events from the `eventsFrom`-th (oldest first,
    /// ``OrderDossier/eventsPerPage``) and how many there are, its payments, grants and webhook events; nil when
    /// there is no such order.
    public func dossier(orderNo: String, eventsFrom: Int) async throws -> OrderDossier? {
        try await database.read(joining: write) { db in
            guard
                let row = try await db.sql(
                    "SELECT \(unsafeRaw: Self.orderColumns) FROM orders WHERE order_no = \(bind: orderNo)"
                ).first()
            else { return nil }
            let order = try Self.decodeOrder(row)
            let orderID = try row.decode(column: "id", as: Int64.self)
            let eventCount =
                try await db.sql("SELECT COUNT(*) AS n FROM order_events WHERE order_id = \(bind: orderID)")
                .first()?.decode(column: "n", as: Int64.self) ?? 0
            let flagWaiting =
                order.status == .flagged
                ? try await db.sql(
                    """
                    SELECT 1 AS one FROM orders o WHERE o.id = \(bind: orderID) AND \(unsafeRaw: Self.flagWaiting)
                    """
                ).first() != nil : false
            let events = try await db.sql(
                """
                SELECT kind, from_status, to_status, cause, evidence, detail, created_at FROM order_events
                WHERE order_id = \(bind: orderID) ORDER BY id LIMIT \(bind: OrderDossier.eventsPerPage) OFFSET \(bind: max(eventsFrom, 0))
                """
            ).all().map { row in
                OrderDossier.Event(
                    kind: OrderEventKind(rawValue: try row.decode(column: "kind", as: String.self)),
                    fromStatus: try row.decode(column: "from_status", as: String?.self).flatMap(
                        OrderStatus.init(rawValue:)),
                    toStatus: try row.decode(column: "to_status", as: String?.self).flatMap(
                        OrderStatus.init(rawValue:)),
                    cause: EventCause(rawValue: try row.decode(column: "cause", as: String.self)) ?? .system,
                    evidence: try row.decode(column: "evidence", as: String?.self),
                    note: try row.decode(column: "detail", as: String?.self),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)))
            }
            let payments = try await db.sql(
                """
                SELECT channel, provider_txn_id, original_txn_id, amount_minor, currency, cause, evidence, recorded_at, reversal, reversed_at
                FROM payment_transactions WHERE order_id = \(bind: orderID) ORDER BY id
                """
            ).all().map { row in
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
                    let currency = CurrencyCode(try row.decode(column: "currency", as: String.self))
                else {
                    throw LedgerCorruption(detail: "a payment of order \(orderNo) has a value this build does not know")
                }
                return OrderDossier.Payment(
                    channel: channel, providerTransactionID: try row.decode(column: "provider_txn_id", as: String.self),
                    originalTransactionID: try row.decode(column: "original_txn_id", as: String?.self),
                    amount: Money(
                        amountMinor: try row.decode(column: "amount_minor", as: Int64.self), currency: currency),
                    cause: EventCause(rawValue: try row.decode(column: "cause", as: String.self)) ?? .system,
                    evidence: try row.decode(column: "evidence", as: String.self),
                    recordedAt: Date(millisecondsSince1970: try row.decode(column: "recorded_at", as: Int64.self)),
                    reversal: try Self.reversalKind(row),
                    reversedAt: try row.decode(column: "reversed_at", as: Int64?.self).map(
                        Date.init(millisecondsSince1970:)))
            }
            let grants = try await db.sql(
                """
                SELECT p.provider_txn_id, g.kind, g.target, g.amount, g.period, g.expires_at, g.reversed_at
                FROM grants g JOIN payment_transactions p ON p.id = g.payment_transaction_id
                WHERE p.order_id = \(bind: orderID) ORDER BY g.payment_transaction_id, g.grant_index
                """
            ).all().map { row in
                OrderDossier.GrantRecord(
                    providerTransactionID: try row.decode(column: "provider_txn_id", as: String.self),
                    kind: try Self.grantKind(row),
                    target: try row.decode(column: "target", as: String.self),
                    amount: try row.decode(column: "amount", as: Int64?.self),
                    period: try row.decode(column: "period", as: String?.self),
                    expiresAt: try row.decode(column: "expires_at", as: Int64?.self).map(
                        Date.init(millisecondsSince1970:)),
                    reversedAt: try row.decode(column: "reversed_at", as: Int64?.self).map(
                        Date.init(millisecondsSince1970:)))
            }
            let webhooks = try await db.sql(
                """
                SELECT event_id, event_type, created_at, attempts, delivered_at, last_error FROM webhook_outbox
                WHERE order_id = \(bind: orderID) ORDER BY id
                """
            ).all().map(Self.decodeWebhook)
            let conflicts = try await Self.conflicts(db, orderID: orderID)
            let evidence = events.compactMap(\.evidence) + payments.map(\.evidence) + conflicts.map(\.evidence)
            let ids = Set(evidence.flatMap(OrderDossier.signalIDs(in:)))
            var signals: [OrderDossier.Signal] = []
            if !ids.isEmpty {
                signals = try await db.sql(
                    """
                    SELECT id, channel, kind, received_at, processed_at, attempts, verdict, last_error, body_sha256,
                           (SELECT LENGTH(body) FROM inbox_bodies WHERE inbox_bodies.id = inbox.id) AS bytes
                    FROM inbox WHERE id IN (\(binds: ids.sorted().prefix(100).map { $0 })) ORDER BY id
                    """
                ).all().compactMap { row in
                    guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)) else {
                        return nil
                    }
                    return OrderDossier.Signal(
                        id: try row.decode(column: "id", as: Int64.self), channel: channel,
                        kind: try Self.inboxKind(row),
                        receivedAt: Date(millisecondsSince1970: try row.decode(column: "received_at", as: Int64.self)),
                        processedAt: try row.decode(column: "processed_at", as: Int64?.self).map(
                            Date.init(millisecondsSince1970:)),
                        attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
                        verdict: try Self.inboxVerdict(row),
                        lastError: try row.decode(column: "last_error", as: String?.self),
                        bodySHA256: try row.decode(column: "body_sha256", as: String.self),
                        bodyBytes: try row.decode(column: "bytes", as: Int64.self))
                }
            }
            return OrderDossier(
                order: order, flagWaiting: flagWaiting, events: events, eventCount: Int(eventCount),
                eventsFrom: max(eventsFrom, 0),
                payments: payments, grants: grants, webhooks: webhooks, signals: signals, conflicts: conflicts)
        }
    }

    /// The payment id conflicts `orderID` is either side of (at most 100: each is one signal, kept once per order).
    private static func conflicts(_ db: any SQLDatabase, orderID: Int64) async throws -> [OrderDossier.Conflict] {
        try await db.sql(
            """
            SELECT c.channel, c.provider_txn_id, claiming.order_no AS claiming_no, recorded.order_no AS recorded_no, c.amount_minor,
                   c.currency, c.cause, c.evidence, c.created_at
            FROM payment_conflicts c JOIN orders claiming ON claiming.id = c.order_id JOIN orders recorded ON recorded.id = c.recorded_order_id
            WHERE c.order_id = \(bind: orderID) OR c.recorded_order_id = \(bind: orderID) ORDER BY c.id LIMIT 100
            """
        ).all().map { row in
            guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
                let currency = CurrencyCode(try row.decode(column: "currency", as: String.self))
            else {
                throw LedgerCorruption(
                    detail: "a payment conflict of order \(orderID) has a value this build does not know")
            }
            return OrderDossier.Conflict(
                channel: channel, providerTransactionID: try row.decode(column: "provider_txn_id", as: String.self),
                claimingOrderNo: try row.decode(column: "claiming_no", as: String.self),
                recordedOrderNo: try row.decode(column: "recorded_no", as: String.self),
                amount: Money(amountMinor: try row.decode(column: "amount_minor", as: Int64.self), currency: currency),
                cause: EventCause(rawValue: try row.decode(column: "cause", as: String.self)) ?? .system,
                evidence: try row.decode(column: "evidence", as: String.self),
                createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)))
        }
    }

    /// A payment row's `reversal` (nil: standing); a value this build does not know is a corrupt ledger.
    static func reversalKind(_ row: any SQLRow) throws -> Reversal.Kind? {
        guard let reversal = try row.decode(column: "reversal", as: String?.self) else { return nil }
        guard let known = Reversal.Kind(rawValue: reversal) else {
            throw LedgerCorruption(detail: "payment of unknown reversal \(reversal)")
        }
        return known
    }

    /// A grant row's `kind`; a value this build does not know is a corrupt ledger.
    static func grantKind(_ row: any SQLRow) throws -> Grant.Kind {
        let kind = try row.decode(column: "kind", as: String.self)
        guard let known = Grant.Kind(rawValue: kind) else {
            throw LedgerCorruption(detail: "grant of unknown kind \(kind)")
        }
        return known
    }

    static func decodeWebhook(_ row: any SQLRow) throws -> OrderDossier.Webhook {
        OrderDossier.Webhook(
            eventID: try row.decode(column: "event_id", as: String.self),
            type: WebhookEventType(rawValue: try row.decode(column: "event_type", as: String.self)),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
            deliveredAt: try row.decode(column: "delivered_at", as: Int64?.self).map(Date.init(millisecondsSince1970:)),
            lastError: try row.decode(column: "last_error", as: String?.self))
    }

    /// An operator resolves a flagged order with a note: an event naming the operator, in the order's history and
    /// in the operators' log. The status stays `flagged` (what happened stays visible); the flag stops waiting.
    public func resolveFlag(orderNo: String, operatorName: String, note: String, at date: Date) async throws
        -> ConsoleActionOutcome
    {
        try await database.transaction(joining: write) { db in
            guard let order = try await Self.loadOrder(db, where: "order_no", orderNo, forUpdate: true) else {
                return .notFound
            }
            guard order.status == .flagged else {
                return .notApplicable("order '\(orderNo)' is \(order.status.rawValue), not flagged")
            }
            guard
                let row = try await db.sql(
                    """
                    SELECT o.id FROM orders o WHERE o.order_no = \(bind: orderNo) AND \(unsafeRaw: Self.flagWaiting)
                    """
                ).first()
            else { return .notApplicable("the flag of order '\(orderNo)' is already resolved") }
            let orderID = try row.decode(column: "id", as: Int64.self)
            let now = date.millisecondsSince1970
            try await db.sql(
                """
                INSERT INTO order_events (order_id, kind, from_status, to_status, cause, evidence, detail, created_at)
                VALUES (\(bind: orderID), \(bind: OrderEventKind.flagResolved.rawValue), NULL, NULL, 'admin', \(bind: "operator:\(operatorName)"),
                        \(bind: note), \(bind: now))
                """
            ).run()
            try await db.sql("UPDATE orders SET updated_at = \(bind: now) WHERE id = \(bind: orderID)").run()
            LedgerDatabase.orderChanged(id: orderID, on: db)
            try await Self.logAction(
                OperatorAction(
                    operatorName: operatorName, action: .resolveFlag, target: orderNo, detail: note, at: date), db)
            return .done
        }
    }

    /// The condition on `orders o` that no operator resolved its flag since it was last flagged (the overview's count,
    /// the resolution's guard, and ``OrderDossier/flagWaiting`` use it).
    static let flagWaiting = """
        NOT EXISTS (SELECT 1 FROM order_events r WHERE r.order_id = o.id AND r.kind = '\(OrderEventKind.flagResolved.rawValue)'
          AND r.id > (SELECT COALESCE(MAX(f.id), 0) FROM order_events f WHERE f.order_id = o.id AND f.kind LIKE 'flagged%'))
        """

    /// Appends an operator's action on an order to its history (`cause` admin, evidence naming the operator) and to
    /// the operators' log.
    public func noteOperatorAction(orderNo: String, _ action: OperatorAction) async throws {
        try await database.transaction(joining: write) { db in
            if let row = try await db.sql("SELECT id FROM orders WHERE order_no = \(bind: orderNo)").first() {
                try await db.sql(
                    """
                    INSERT INTO order_events (order_id, kind, from_status, to_status, cause, evidence, detail, created_at)
                    VALUES (\(bind: try row.decode(column: "id", as: Int64.self)), \(bind: "operator:\(action.action)"), NULL, NULL, 'admin',
                            \(bind: "operator:\(action.operatorName)"), \(bind: action.detail), \(bind: action.at.millisecondsSince1970))
                    """
                ).run()
            }
            try await Self.logAction(action, db)
        }
    }

    /// Schedules a webhook event to be sent again now (delivered or not); the attempt count goes on.
    public func redeliverWebhook(eventID: String, operatorName: String, at date: Date) async throws
        -> ConsoleActionOutcome
    {
        try await database.transaction(joining: write) { db in
            guard
                try await db.sql(
                    """
                    UPDATE webhook_outbox SET delivered_at = NULL, next_attempt_at = \(bind: date.millisecondsSince1970)
                    WHERE event_id = \(bind: eventID) RETURNING id
                    """
                ).first() != nil
            else { return .notFound }
            try await Self.logAction(
                OperatorAction(operatorName: operatorName, action: .redeliverWebhook, target: eventID, at: date), db)
            return .done
        }
    }
}

/// How an operator's action on the ledger ended.
public enum ConsoleActionOutcome: Sendable, Hashable {
    case done
    case notFound
    /// The action does not apply to the target as it is now; the text says why.
    case notApplicable(String)
}
