import Foundation
import Logging
import PostgresKit
import SQLKit
import Synchronization

/// The SQL engine behind the ledger, for the few statements whose spelling differs.
public enum SQLEngine: String, Sendable {
    case sqlite
    case postgres
}

/// The ledger's database, SQLite or PostgreSQL: reads on their own connections, writes through a group-commit
/// writer.
public final class LedgerDatabase: Sendable {
    public let url: DatabaseURL
    public let engine: SQLEngine
    /// Whether writes keep the merchant's webhook events in the outbox: not when no endpoint is configured
    /// (`webhooks.url`), where nobody would ever take them — three rows of an order's JSON per submission, a tenth of
    /// a submission's CPU, kept for ever. An endpoint configured later hears of the changes made from then on.
    public let keepsWebhookEvents: Bool
    private let source: any SQLSessionSource
    private let writer: GroupCommitWriter
    /// The inbox segments known to be stored (``InboxSegment``).
    let knownInboxSegments = KnownInboxSegments()

    /// How many writes one transaction gathers at most, unless told: 64 on SQLite (one writer: groups share its
    /// commits); 8 on PostgreSQL, whose lanes join as writes queue (``GroupCommitWriter``). There a group holds each
    /// write's row locks until the whole group commits, so a group is kept short, and its writes run in the order of
    /// their keys, so that groups on different lanes or replicas never lock two users' rows in opposite orders (the
    /// deadlocks of unordered groups, measured: two replicas answered 288/s with a p99 of 508 ms). Against groups of
    /// one (`ORDERSAFE_AB_ENGINE=postgres scripts/load-ab`, docs/benchmarks.md): a submission's CPU ×0.78, its p99
    /// lower.
    public static func defaultMaxGroupSize(for engine: SQLEngine) -> Int {
        engine == .sqlite ? 64 : 8
    }

    /// Opens (and for SQLite, creates) the database. No connection is made until first use.
    /// - Parameters:
    ///   - maxGroupSize: how many concurrent writes may share one transaction (1 commits each alone); by default
    ///     ``defaultMaxGroupSize(for:)``.
    ///   - keepingWebhookEvents: ``keepsWebhookEvents``.
    public init(
        url: DatabaseURL, maxConnectionsPerEventLoop: Int = 4, maxGroupSize: Int? = nil,
        keepingWebhookEvents: Bool = true, logger: Logger
    ) throws {
        self.url = url
        keepsWebhookEvents = keepingWebhookEvents
        switch url {
        case .sqliteFile(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            source = SQLiteSessionSource(path: path, logger: logger)
            engine = .sqlite
        case .sqliteMemory:
            source = SQLiteSessionSource(path: nil, logger: logger)
            engine = .sqlite
        case .postgres(let text):
            source = try PostgresSessionSource(
                url: text, maxConnectionsPerEventLoop: maxConnectionsPerEventLoop, logger: logger)
            engine = .postgres
        }
        writer = GroupCommitWriter(
            lanes: source.writeLanes, maxGroupSize: maxGroupSize ?? Self.defaultMaxGroupSize(for: engine),
            begin: engine == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN",
            chain: engine == .postgres ? "COMMIT AND CHAIN" : nil,
            executor: source.writeExecutor, ordered: engine == .postgres,
            transient: Self.isTransient,
            session: { [source] body in try await source.writeSession(body) })
    }

    /// PostgreSQL's deadlock (`40P01`) and serialization failure (`40001`), and a payment whose provider transaction
    /// another transaction recorded since the write looked (`23505` on `payment_transactions`, ``ReservedPayment``):
    /// a transaction that may succeed run again.
    /// PostgresNIO answers a prepared statement's error as a `PostgresError`, any other's as a `PSQLError`.
    static func isTransient(_ error: any Error) -> Bool {
        let state: String?
        let table: String?
        if let error = error as? PSQLError {
            (state, table) = (error.serverInfo?[.sqlState], error.serverInfo?[.tableName])
        } else if case .server(let server)? = error as? PostgresError {
            (state, table) = (server.fields[.sqlState], server.fields[.tableName])
        } else {
            return false
        }
        return state == "40P01" || state == "40001" || (state == "23505" && table == "payment_transactions")
    }

    final class FirstError: Sendable {
        private let error = Mutex<(any Error)?>(nil)
        func record(_ error: any Error) { self.error.withLock { $0 = $0 ?? error } }
        var recorded: (any Error)? { error.withLock { $0 } }
    }

    /// The write `db` is the connection of, when it is one of this database's writes.
    private func write(of db: (any SQLDatabase)?) -> WriteConnection? {
        guard let connection = db?.exactly(WriteConnection.self), connection.database == ObjectIdentifier(self) else {
            return nil
        }
        return connection
    }

    /// Runs `body` on a connection for reading: it sees what has committed and does not wait for writes. Given the
    /// connection of a write of this database (`joining`), it reads on that write's connection and so sees what the
    /// write has done so far.
    public func read<R: Sendable>(
        joining write: (any SQLDatabase)? = nil, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let connection = self.write(of: write) { return try await body(connection) }
        return try await source.read(body)
    }

    /// Runs `body` atomically: committed if it returns, rolled back if it throws. It may share its database
    /// transaction with concurrent writes; it returns only once that transaction has committed, so what it wrote is
    /// durable when the caller hears of it.
    ///
    /// Given the connection of a write of this database (`joining`: what another write's body was given), it joins
    /// that write and commits with it: this is how several ledger operations become one transaction. If a joined part
    /// throws, the whole write fails (nothing of it is kept), even when its caller catches the error and goes on: no
    /// savepoints, whose copies of every page cost the writer a tenth of its time in the profile.
    public func transaction<R: Sendable>(
        joining write: (any SQLDatabase)? = nil, lockOrder: String? = nil,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let connection = self.write(of: write) {
            do {
                return try await body(connection)
            } catch {
                connection.failure.record(error)
                throw error
            }
        }
        let (id, keepsWebhookEvents) = (ObjectIdentifier(self), keepsWebhookEvents)
        return try await withCheckedThrowingContinuation { continuation in
            writer.submit(
                Write(
                    exclusive: false, lockOrder: lockOrder,
                    body: { db in
                        let connection = WriteConnection(
                            base: db, database: id, deferred: DeferredInserts(), failure: FirstError(),
                            heldOrders: HeldOrders(), keepsWebhookEvents: keepsWebhookEvents)
                        let result = try await body(connection)
                        if let error = connection.failure.recorded { throw error }
                        try await connection.deferred.flush(db)
                        return result
                    }, continuation: continuation))
        }
    }

    /// Runs `body` alone on a writing connection, outside any transaction (schema changes, maintenance); on a
    /// write's connection (`joining`), inside that write.
    public func withSession<R: Sendable>(
        joining write: (any SQLDatabase)? = nil, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let connection = self.write(of: write) { return try await body(connection) }
        return try await withCheckedThrowingContinuation { continuation in
            writer.submit(Write(exclusive: true, body: body, continuation: continuation))
        }
    }

    /// True when a simple query succeeds.
    public func ping() async -> Bool {
        do {
            return try await read { db in try await db.sql("SELECT 1 AS one").first() != nil }
        } catch {
            return false
        }
    }

    /// Opens the database, runs `body` with it, and closes it however `body` ends (one-shot commands).
    public static func with<R: Sendable>(
        url: DatabaseURL, maxConnectionsPerEventLoop: Int = 4, logger: Logger,
        _ body: (LedgerDatabase) async throws -> R
    ) async throws -> R {
        let database = try LedgerDatabase(
            url: url, maxConnectionsPerEventLoop: maxConnectionsPerEventLoop, logger: logger)
        let result: R
        do {
            result = try await body(database)
        } catch {
            try? await database.shutdown()
            throw error
        }
        try await database.shutdown()
        return result
    }

    /// Finishes the queued writes, then closes every connection. Call once, at shutdown.
    public func shutdown() async throws {
        await writer.close()
        try await source.shutdown()
    }
}
