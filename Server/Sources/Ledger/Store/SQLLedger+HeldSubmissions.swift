import Foundation
import SQLKit

extension SQLLedger {
    /// The condition on `inbox` rows of a held submission (``InboxVerdict/held``, not replayed yet).
    static let held = "verdict = 'held' AND processed_at IS NULL"

    public func heldSubmissions(limit: Int) async throws -> [PendingSignal] {
        try await database.read(joining: write) { db in
            try await db.raw(
                """
                SELECT id, channel, headers, body, attempts FROM inbox
                WHERE \(unsafeRaw: Self.held) ORDER BY id LIMIT \(bind: min(max(limit, 1), 10_000))
                """
            ).all().map(Self.decodeSignal)
        }
    }

    /// How many submissions are held.
    public func heldSubmissionCount() async throws -> Int {
        try await database.read(joining: write) { db in
            Int(
                try await db.raw("SELECT COUNT(*) AS n FROM inbox WHERE \(unsafeRaw: Self.held)").first()?
                    .decode(column: "n", as: Int64.self) ?? 0)
        }
    }

    @discardableResult
    public func purgeHeldSubmissions(keeping: Int) async throws -> Int {
        try await database.transaction(joining: write) { db in
            try await db.raw(
                """
                DELETE FROM inbox WHERE \(unsafeRaw: Self.held) AND id <= (
                    SELECT id FROM inbox WHERE \(unsafeRaw: Self.held) ORDER BY id DESC LIMIT 1 OFFSET \(bind: keeping))
                RETURNING id
                """
            ).all().count
        }
    }
}
