import SQLKit
import Synchronization

/// Statements a write does not need an answer from, held so that several go to the database as one (on PostgreSQL
/// one round trip; SQLite has none to save):
///
/// - rows appended to history tables (order events, webhook events), gathered while the write's body runs and
///   inserted once it is done, one multi-row statement per table. Nothing in a write reads these tables back, so
///   holding the rows until the end changes no answer; they commit with the write or not at all, in the order added.
/// - changes (a grant's balance or entitlement and its record), held only until the write's next statement of any
///   kind (``WriteConnection`` runs them first, so that statement sees them) or its end. An App Store submission's
///   grant is the last change before its end, and now travels with its events: one statement fewer per submission;
///   on PostgreSQL the order it adopts and its payment travel with them too (``ReservedPayment``): one fewer again.
final class DeferredInserts: Sendable {
    private struct Pending {
        /// Per statement head (`INSERT INTO table (columns) VALUES `), in the order first used: its rows, in order.
        var rows: [(head: String, rows: [LedgerSQL])] = []
        /// Changes held until the next statement, in order.
        var changes: [LedgerSQL] = []
        /// Whether the changes held only change rows of their own (``hold(_:ownRows:)``).
        var onlyOwnRows = false
    }

    private let pending = Mutex(Pending())

    func add(_ head: String, rows: [LedgerSQL]) {
        pending.withLock { pending in
            if let index = pending.rows.firstIndex(where: { $0.head == head }) {
                pending.rows[index].rows += rows
            } else {
                pending.rows.append((head, rows))
            }
        }
    }

    /// Holds `statements` (none reading what another writes) until the write's next statement or its end; false,
    /// holding nothing, when changes are held already: two changes of one row must not run as one statement, so the
    /// caller runs those held first. Statements that change only rows of their own, which no other change of the
    /// write touches (`ownRows`: a payment, with its id reserved, and the order it pays or adopts), are joined by
    /// the next changes.
    func hold(_ statements: [LedgerSQL], ownRows: Bool = false) -> Bool {
        pending.withLock { pending in
            guard pending.changes.isEmpty || pending.onlyOwnRows else { return false }
            pending.onlyOwnRows = ownRows && (pending.changes.isEmpty || pending.onlyOwnRows)
            pending.changes += statements
            return true
        }
    }

    var holdsChanges: Bool { pending.withLock { !$0.changes.isEmpty } }

    /// Runs the changes held, if any, on the write's connection.
    func flushChanges(_ db: any SQLDatabase) async throws {
        let changes = pending.withLock { pending in
            defer { (pending.changes, pending.onlyOwnRows) = ([], false) }
            return pending.changes
        }
        try await LedgerDatabase.runTogether(changes, on: db)
    }

    /// Runs everything held, changes first (on PostgreSQL, in one statement), at the end of the write.
    func flush(_ db: any SQLDatabase) async throws {
        let gathered = pending.withLock { pending in
            defer { pending = Pending() }
            return pending
        }
        try await LedgerDatabase.runTogether(
            gathered.changes + gathered.rows.flatMap { Self.statements($0.head, rows: $0.rows, on: db) }, on: db)
    }

    /// The statements inserting `rows` with `head`: on PostgreSQL one, `head` followed by every row (one round
    /// trip); on SQLite one a row. SQLite has no round trip to save, and an insert of several rows keeps a statement
    /// journal (a copy of every page it changes, to undo it alone, five allocations a page) that an insert of one
    /// row needs not; one text for any number of rows is also one prepared statement, where each count of rows was
    /// one of its own.
    static func statements(_ head: String, rows: [LedgerSQL], on db: any SQLDatabase) -> [LedgerSQL] {
        guard db.dialect.name == "postgresql" else { return rows.map { LedgerSQL(head) + $0 } }
        return [rows.joined(separator: ", ", after: head)]
    }
}

extension LedgerDatabase {
    /// Inserts `rows` with `head` (`INSERT INTO table (columns) VALUES `): at the end of the write when `db` is a
    /// write's connection, gathered with the write's other rows for the same table; at once otherwise.
    static func insert(_ head: String, rows: [LedgerSQL], on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        if let deferred = db.exactly(WriteConnection.self)?.deferred {
            deferred.add(head, rows: rows)
        } else {
            for statement in DeferredInserts.statements(head, rows: rows, on: db) { try await db.sql(statement).run() }
        }
    }

    /// Runs `statements` (none reading what another writes, none answering anything) together: inside a write, held
    /// until its next statement or its end, where they join what else is held; at once otherwise. `ownRows`: they
    /// change only rows no other change of the write touches (``DeferredInserts/hold(_:ownRows:)``).
    static func change(_ statements: [LedgerSQL], on db: any SQLDatabase, ownRows: Bool = false) async throws {
        guard let deferred = db.exactly(WriteConnection.self)?.deferred else {
            return try await runTogether(statements, on: db)
        }
        if !deferred.hold(statements, ownRows: ownRows) {
            try await deferred.flushChanges(db)
            _ = deferred.hold(statements, ownRows: ownRows)
        }
    }
}
