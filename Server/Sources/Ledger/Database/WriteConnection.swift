import Logging
import NIOCore
import SQLKit

/// The connection a write's body is given, and the handle of that write: the writer's own connection, except that
/// the changes the write holds (``DeferredInserts/hold(_:)``) run before any other statement of it, so every
/// statement sees everything the write did before it. Should those changes fail, the whole write fails, even if the
/// statement's caller catches the error and goes on. Passed on (``LedgerDatabase/transaction(joining:_:)``), it
/// makes another step part of the same write.
///
/// A class: the write's steps cast their `any SQLDatabase` to it (``LedgerDatabase/heldOrders(_:)`` and the like) many
/// times a submission, and a cast to a class copies a reference where one to a struct of six fields copied the struct
/// out of its existential's box, retaining each field.
final class WriteConnection: SQLDatabase, Sendable {
    let base: any SQLDatabase
    /// The ``LedgerDatabase`` whose write this is.
    let database: ObjectIdentifier
    /// History rows inserted once the body is done, changes held until its next statement.
    let deferred: DeferredInserts
    /// The first error a joined part threw: it fails the whole write, even if its caller went on.
    let failure: LedgerDatabase.FirstError
    /// Orders this write inserted or read locked, for its later steps.
    let heldOrders: HeldOrders
    /// ``LedgerDatabase/keepsWebhookEvents`` of its database.
    let keepsWebhookEvents: Bool
    /// The ids its lookup reserved for the payment it may record.
    let reservedPayment = ReservedPayment.Slot()
    /// `base`, when it is the ledger's SQLite writer: statements run on it directly (``LedgerSQLBuilder``).
    private let sqlite: PreparedSQLiteConnection?

    init(
        base: any SQLDatabase, database: ObjectIdentifier, deferred: DeferredInserts,
        failure: LedgerDatabase.FirstError, heldOrders: HeldOrders, keepsWebhookEvents: Bool
    ) {
        self.base = base
        self.database = database
        self.deferred = deferred
        self.failure = failure
        self.heldOrders = heldOrders
        self.keepsWebhookEvents = keepsWebhookEvents
        sqlite = base.exactly(PreparedSQLiteConnection.self)
    }

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await flushHeldChanges()
        try await base.execute(sql: query, onRow)
    }

    /// Runs `insert` after the changes the write holds and answers the row id it inserted
    /// (``SQLDatabase/insertedID(_:)``).
    func insertedRowID(_ insert: LedgerSQL) async throws -> Int64? {
        try await flushHeldChanges()
        if let sqlite { return try sqlite.insertedRowID(insert) }
        return try await base.insertedID(insert)
    }

    /// Runs `statement` and answers its rows when the write's connection is the ledger's SQLite writer; nil (and
    /// nothing run) on any other.
    func sqliteRows(of statement: LedgerSQL) async throws -> [PreparedSQLiteRow]? {
        guard let sqlite else { return nil }
        try await flushHeldChanges()
        return try sqlite.rows(of: statement)
    }

    /// Runs the changes the write holds, before any other statement of it.
    private func flushHeldChanges() async throws {
        guard deferred.holdsChanges else { return }
        do {
            try await deferred.flushChanges(base)
        } catch {
            failure.record(error)
            throw error
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<
        Void
    > {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }
}

extension LedgerDatabase {
    /// Whether the write `db` keeps webhook events (``keepsWebhookEvents``); outside a write, they are kept.
    static func keepsWebhookEvents(_ db: any SQLDatabase) -> Bool {
        db.exactly(WriteConnection.self)?.keepsWebhookEvents ?? true
    }
}
