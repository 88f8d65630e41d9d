import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// A job that is running when it is enqueued again is fenced off (its worker cannot complete it) and made
    /// claimable at once, so the new request is never swallowed by the old run's completion.
    public func enqueue(_ job: NewJob) async throws {
        try await database.transaction(joining: write) { db in try await Self.enqueue(job, db: db, at: job.runAt) }
    }

    static func enqueue(_ job: NewJob, db: any SQLDatabase, at date: Date) async throws {
        let runAt = job.runAt.millisecondsSince1970
        try await db.sql(
            """
            INSERT INTO jobs (kind, dedupe_key, payload, run_at, created_at)
            VALUES (\(bind: job.kind.rawValue), \(bind: job.key), \(bind: job.payload), \(bind: runAt), \(bind: date.millisecondsSince1970))
            ON CONFLICT (kind, dedupe_key) DO UPDATE SET
                run_at = CASE WHEN jobs.done_at IS NULL AND jobs.run_at < excluded.run_at THEN jobs.run_at ELSE excluded.run_at END,
                payload = CASE WHEN excluded.payload = '' THEN jobs.payload ELSE excluded.payload END, done_at = NULL,
                lease_owner = NULL, lease_until = NULL, fence = jobs.fence + 1
            """
        ).run()
    }

    public func claimJobs(owner: String, limit: Int, lease: TimeInterval, now: Date, lane: JobLane) async throws
        -> [ClaimedJob]
    {
        let nowMS = now.millisecondsSince1970
        let until = now.addingTimeInterval(lease).millisecondsSince1970
        let lock = database.engine == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let kinds: LedgerSQL =
            switch lane {
            case .all: ""
            case .only(let kinds): " AND kind IN (\(binds: kinds.map(\.rawValue).sorted()))"
            case .except(let kinds): " AND kind NOT IN (\(binds: kinds.map(\.rawValue).sorted()))"
            }
        return try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                UPDATE jobs SET lease_owner = \(bind: owner), lease_until = \(bind: until), fence = fence + 1, attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM jobs
                    WHERE done_at IS NULL AND run_at <= \(bind: nowMS) AND (lease_until IS NULL OR lease_until < \(bind: nowMS))\(kinds)
                    ORDER BY run_at, id LIMIT \(bind: limit)\(unsafeRaw: lock))
                RETURNING id, kind, dedupe_key, payload, attempts, fence, lease_until
                """
            ).all().map { row in
                ClaimedJob(
                    id: try row.decode(column: "id", as: Int64.self),
                    kind: JobKind(rawValue: try row.decode(column: "kind", as: String.self)),
                    key: try row.decode(column: "dedupe_key", as: String.self),
                    payload: try row.decode(column: "payload", as: String.self),
                    attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
                    fence: try row.decode(column: "fence", as: Int64.self),
                    leaseUntil: Date(millisecondsSince1970: try row.decode(column: "lease_until", as: Int64.self)))
            }.sorted { $0.id < $1.id }
        }
    }

    public func complete(_ job: ClaimedJob, _ result: JobResult, at date: Date) async throws -> Bool {
        try await database.transaction(joining: write) { db in
            let updated: (any SQLRow)?
            switch result {
            case .done:
                updated = try await db.sql(
                    """
                    UPDATE jobs SET done_at = \(bind: date.millisecondsSince1970), lease_owner = NULL, lease_until = NULL, last_error = NULL
                    WHERE id = \(bind: job.id) AND fence = \(bind: job.fence) AND done_at IS NULL RETURNING id
                    """
                ).first()
            case .retry(let runAt, let note, let payload):
                updated = try await db.sql(
                    """
                    UPDATE jobs SET run_at = \(bind: runAt.millisecondsSince1970), lease_owner = NULL, lease_until = NULL,
                                    last_error = \(bind: note.map { String($0.prefix(500)) }), payload = COALESCE(\(bind: payload), payload)
                    WHERE id = \(bind: job.id) AND fence = \(bind: job.fence) AND done_at IS NULL RETURNING id
                    """
                ).first()
            }
            return updated != nil
        }
    }

    public func pendingJobs(now: Date) async throws -> (due: Int, later: Int) {
        try await database.read(joining: write) { db in
            let row = try await db.sql(
                """
                SELECT COALESCE(SUM(CASE WHEN run_at <= \(bind: now.millisecondsSince1970) THEN 1 ELSE 0 END), 0) AS due,
                       COALESCE(SUM(CASE WHEN run_at > \(bind: now.millisecondsSince1970) THEN 1 ELSE 0 END), 0) AS later
                FROM jobs WHERE done_at IS NULL
                """
            ).first()
            return (
                Int(try row?.decode(column: "due", as: Int64.self) ?? 0),
                Int(try row?.decode(column: "later", as: Int64.self) ?? 0)
            )
        }
    }
}
