import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// Writes the merchant webhook event for an order's state change into the outbox, in the transaction that
    /// made the change: a change is never committed without its event, nor an event without its change (when the
    /// database keeps webhook events: ``LedgerDatabase/keepsWebhookEvents``).
    static func emitWebhook(_ db: any SQLDatabase, orderID: Int64, cause: EventCause, evidence: String?, at date: Date)
        async throws
    {
        guard LedgerDatabase.keepsWebhookEvents(db), let order = try await loadOrder(db, where: "id", orderID) else {
            return
        }
        try await emitWebhooks(db, orderID: orderID, states: [order], cause: cause, evidence: evidence, at: date)
    }

    /// Writes one webhook event per state the order went through (`states`, oldest first, as the caller knows
    /// them): inserted with the write's other webhook rows when it is done (``LedgerDatabase/insert(_:rows:on:)``);
    /// none when the database keeps no webhook events.
    static func emitWebhooks(
        _ db: any SQLDatabase, orderID: Int64, states: [Order], cause: EventCause, evidence: String?, at date: Date
    )
        async throws
    {
        guard !states.isEmpty, LedgerDatabase.keepsWebhookEvents(db) else { return }
        let now = date.millisecondsSince1970
        let rows: [LedgerSQL] = states.map { order in
            let eventID = Self.eventID(at: now)
            let type = WebhookEventType.order(order.status).rawValue
            let payload = WebhookPayload.json(
                id: eventID, type: type, createdAt: date, order: order, cause: cause.rawValue, evidence: evidence)
            return "(\(bind: eventID), \(bind: type), \(bind: orderID), \(bind: payload), \(bind: now), \(bind: now))"
        }
        try await LedgerDatabase.insert(
            "INSERT INTO webhook_outbox (event_id, event_type, order_id, payload, created_at, next_attempt_at) VALUES ",
            rows: rows, on: db)
    }

    /// `evt_` and 32 hexadecimal digits: the milliseconds since 1970 (48 bits), then 80 random bits. Leading with
    /// the time, events made later sort after earlier ones, so the outbox's unique index of them grows at its end
    /// (a random id put each event on an index page of its own, two pages more per submission for its commit to
    /// write); and the random bits come from the system's generator without opening `/dev/urandom` (as `UUID()`
    /// does on Linux, on the writer's thread).
    static func eventID(at milliseconds: Int64) -> String {
        var generator = SystemRandomNumberGenerator()
        let time = UInt64(max(0, min(milliseconds, (1 << 48) - 1)))
        let (high, low) = (generator.next() as UInt64, generator.next() as UInt64)
        let bytes =
            (0..<6).reversed().map { UInt8(truncatingIfNeeded: time >> (8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: high >> (8 * $0)) } + [
                UInt8(truncatingIfNeeded: low), UInt8(truncatingIfNeeded: low >> 8),
            ]
        return "evt_" + bytes.hexString
    }

    public func claimWebhooks(limit: Int, lease: TimeInterval, now: Date) async throws -> [OutboxEvent] {
        let nowMS = now.millisecondsSince1970
        let lock = database.engine == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = \(bind: now.addingTimeInterval(lease).millisecondsSince1970)
                WHERE id IN (
                    SELECT id FROM webhook_outbox WHERE delivered_at IS NULL AND next_attempt_at <= \(bind: nowMS)
                    ORDER BY id LIMIT \(bind: limit)\(unsafeRaw: lock))
                RETURNING id, event_id, event_type, payload, attempts
                """
            ).all().map { row in
                OutboxEvent(
                    id: try row.decode(column: "id", as: Int64.self),
                    eventID: try row.decode(column: "event_id", as: String.self),
                    type: WebhookEventType(rawValue: try row.decode(column: "event_type", as: String.self)),
                    payload: try row.decode(column: "payload", as: String.self),
                    attempt: Int(try row.decode(column: "attempts", as: Int64.self)))
            }.sorted { $0.id < $1.id }
        }
    }

    public func recordDelivery(_ event: OutboxEvent, _ attempt: DeliveryAttempt, at date: Date) async throws -> Bool {
        try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                INSERT INTO webhook_attempts (outbox_id, attempt, attempted_at, status_code, error, duration_ms)
                VALUES (\(bind: event.id), \(bind: event.attempt), \(bind: date.millisecondsSince1970), \(bind: attempt.statusCode),
                        \(bind: attempt.error.map { String($0.prefix(500)) }), \(bind: Int64(attempt.duration * 1000)))
                """
            ).run()
            let updated: (any SQLRow)?
            if let retryAt = attempt.retryAt {
                updated = try await db.sql(
                    """
                    UPDATE webhook_outbox SET next_attempt_at = \(bind: retryAt.millisecondsSince1970),
                                              last_error = \(bind: attempt.error.map { String($0.prefix(500)) })
                    WHERE id = \(bind: event.id) AND attempts = \(bind: event.attempt) AND delivered_at IS NULL RETURNING id
                    """
                ).first()
            } else {
                updated = try await db.sql(
                    """
                    UPDATE webhook_outbox SET delivered_at = \(bind: date.millisecondsSince1970), last_error = NULL
                    WHERE id = \(bind: event.id) AND delivered_at IS NULL RETURNING id
                    """
                ).first()
            }
            return updated != nil
        }
    }
}
