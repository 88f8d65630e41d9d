import SQLKit
import Synchronization

/// Rows a write appends to its history tables (order events, webhook events), gathered while its body runs and
/// inserted once it is done, one multi-row statement per table (on PostgreSQL, one statement in all): an App Store
/// submission's order is created, paid and fulfilled in one write, whose events and webhook rows were four
/// statements and are now two (one on PostgreSQL). Nothing in a write reads these tables back, so holding the rows
/// until the end changes no answer; they commit with the write or not at all, in the order they were added.
final class DeferredInserts: Sendable {
    /// Per statement head (`INSERT INTO table (columns) VALUES `), in the order first used: its rows, in order.
    private let pending = Mutex<[(head: String, rows: [SQLQueryString])]>([])

    func add(_ head: String, rows: [SQLQueryString]) {
        pending.withLock { pending in
            if let index = pending.firstIndex(where: { $0.head == head }) {
                pending[index].rows += rows
            } else {
                pending.append((head, rows))
            }
        }
    }

    /// Inserts what was gathered, on the write's connection (on PostgreSQL, in one statement).
    func flush(_ db: any SQLDatabase) async throws {
        let gathered = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        try await LedgerDatabase.runTogether(gathered.map { Self.statement($0.head, rows: $0.rows) }, on: db)
    }

    /// One statement: `head` followed by every row.
    static func statement(_ head: String, rows: [SQLQueryString]) -> SQLQueryString {
        SQLQueryString(head) + rows.joined(separator: ", ")
    }
}

extension LedgerDatabase {
    /// Inserts `rows` with `head` (`INSERT INTO table (columns) VALUES `): at the end of the enclosing write when
    /// there is one, gathered with the write's other rows for the same table; at once otherwise.
    static func insert(_ head: String, rows: [SQLQueryString], on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        if let deferred = enclosing?.deferred {
            deferred.add(head, rows: rows)
        } else {
            try await db.raw(DeferredInserts.statement(head, rows: rows)).run()
        }
    }
}
