import Foundation
import SQLKit

extension SQLLedger {
    /// The condition on `inbox` rows of a held submission (``InboxVerdict/held``, not replayed yet).
    static let held = "verdict = '\(InboxVerdict.held.rawValue)' AND processed_at IS NULL"

    public func heldSubmissions(after id: Int64, limit: Int) async throws -> [PendingSignal] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT \(unsafeRaw: Self.signalColumns) FROM inbox
                WHERE \(unsafeRaw: Self.held) AND id > \(bind: id) ORDER BY id LIMIT \(bind: min(max(limit, 1), 10_000))
                """
            ).all().map(Self.decodeSignal)
        }
    }

    public func heldSubmissionCount(headers: [String: String]) async throws -> Int {
        let stored = try Self.storedHeaders(headers)
        return try await database.read(joining: write) { db in
            Int(
                try await db.sql(
                    "SELECT COUNT(*) AS n FROM inbox WHERE \(unsafeRaw: Self.held) AND headers = \(bind: stored)"
                ).first()?.decode(column: "n", as: Int64.self) ?? 0)
        }
    }

    /// How many submissions are held.
    public func heldSubmissionCount() async throws -> Int {
        try await database.read(joining: write) { db in
            Int(
                try await db.sql("SELECT COUNT(*) AS n FROM inbox WHERE \(unsafeRaw: Self.held)").first()?
                    .decode(column: "n", as: Int64.self) ?? 0)
        }
    }

    /// Only entries replayed at least once go (``InboxEntry`` attempts past the first: a replay that left an entry
    /// held counts one more; a device's resubmission does not), so a genuine purchase held behind a flood is never
    /// dropped before an operator's fixed settings had a chance to record it.
    @discardableResult
    public func purgeHeldSubmissions(keeping: Int) async throws -> Int {
        try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                DELETE FROM inbox WHERE \(unsafeRaw: Self.held) AND attempts >= 2 AND id <= (
                    SELECT id FROM inbox WHERE \(unsafeRaw: Self.held) ORDER BY id DESC LIMIT 1 OFFSET \(bind: keeping))
                RETURNING id
                """
            ).all().count
        }
    }
}
