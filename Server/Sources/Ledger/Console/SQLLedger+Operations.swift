import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// Unfinished reconciliation jobs, soonest first.
    public func queuedJobs(limit: Int) async throws -> [QueuedJob] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT id, kind, dedupe_key, run_at, attempts, lease_owner, lease_until, last_error FROM jobs
                WHERE done_at IS NULL ORDER BY run_at, id LIMIT \(bind: min(max(limit, 1), 500))
                """
            ).all().map { row in
                QueuedJob(
                    id: try row.decode(column: "id", as: Int64.self),
                    kind: JobKind(rawValue: try row.decode(column: "kind", as: String.self)),
                    key: try row.decode(column: "dedupe_key", as: String.self),
                    runAt: Date(millisecondsSince1970: try row.decode(column: "run_at", as: Int64.self)),
                    attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
                    leaseOwner: try row.decode(column: "lease_owner", as: String?.self),
                    leaseUntil: try row.decode(column: "lease_until", as: Int64?.self).map(
                        Date.init(millisecondsSince1970:)),
                    lastError: try row.decode(column: "last_error", as: String?.self))
            }
        }
    }

    /// Stored signals not done whose processing failed, waits, or is held, newest first.
    public func inboxProblems(limit: Int) async throws -> [InboxProblem] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT id, channel, kind, received_at, attempts, verdict, last_error FROM inbox
                WHERE processed_at IS NULL AND verdict IN (\(literals: [InboxVerdict.failed, .waiting, .held], joinedBy: ", ")) ORDER BY id DESC LIMIT \(bind: min(max(limit, 1), 500))
                """
            ).all().compactMap { row in
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)) else {
                    return nil
                }
                return InboxProblem(
                    id: try row.decode(column: "id", as: Int64.self), channel: channel,
                    kind: try Self.inboxKind(row),
                    receivedAt: Date(millisecondsSince1970: try row.decode(column: "received_at", as: Int64.self)),
                    attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
                    verdict: try Self.inboxVerdict(row),
                    lastError: try row.decode(column: "last_error", as: String?.self))
            }
        }
    }

    /// A stored notification not done yet, to process again by hand; nil when there is none with that id.
    public func unfinishedNotification(id: Int64) async throws -> PendingSignal? {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT \(unsafeRaw: Self.signalColumns) FROM inbox WHERE id = \(bind: id) AND kind = \(literal: InboxKind.notify) AND processed_at IS NULL
                """
            ).first().map(Self.decodeSignal)
        }
    }

    /// The latest webhook delivery attempts, newest first.
    public func webhookAttempts(limit: Int) async throws -> [WebhookAttemptRecord] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT w.event_id, w.event_type, o.order_no, a.attempt, a.attempted_at, a.status_code, a.error, a.duration_ms
                FROM webhook_attempts a JOIN webhook_outbox w ON w.id = a.outbox_id LEFT JOIN orders o ON o.id = w.order_id
                ORDER BY a.id DESC LIMIT \(bind: min(max(limit, 1), 500))
                """
            ).all().map { row in
                WebhookAttemptRecord(
                    eventID: try row.decode(column: "event_id", as: String.self),
                    type: WebhookEventType(rawValue: try row.decode(column: "event_type", as: String.self)),
                    orderNo: try row.decode(column: "order_no", as: String?.self),
                    attempt: Int(try row.decode(column: "attempt", as: Int64.self)),
                    attemptedAt: Date(millisecondsSince1970: try row.decode(column: "attempted_at", as: Int64.self)),
                    statusCode: try row.decode(column: "status_code", as: Int64?.self).map(Int.init),
                    error: try row.decode(column: "error", as: String?.self),
                    durationMS: try row.decode(column: "duration_ms", as: Int64.self))
            }
        }
    }

    /// An inbox row's `kind`; a value this build does not know is a corrupt ledger.
    static func inboxKind(_ row: any SQLRow) throws -> InboxKind {
        let kind = try row.decode(column: "kind", as: String.self)
        guard let known = InboxKind(rawValue: kind) else {
            throw LedgerCorruption(detail: "inbox entry of unknown kind \(kind)")
        }
        return known
    }

    /// An inbox row's `verdict` (nil while it is processed); a value this build does not know is a corrupt ledger.
    static func inboxVerdict(_ row: any SQLRow) throws -> InboxVerdict? {
        guard let verdict = try row.decode(column: "verdict", as: String?.self) else { return nil }
        guard let known = InboxVerdict(rawValue: verdict) else {
            throw LedgerCorruption(detail: "inbox entry of unknown verdict \(verdict)")
        }
        return known
    }
}
