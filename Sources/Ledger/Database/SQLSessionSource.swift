@preconcurrency import AsyncKit
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit
import Synchronization

/// Lends one database connection at a time to a closure.
protocol SQLSessionSource: Sendable {
    func withSession<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    func shutdown() async throws
}

/// One SQLite connection shared by all callers in turn: SQLite has a single writer, so serialising here
/// turns lock contention into an orderly queue and keeps `BEGIN IMMEDIATE` transactions from failing busy.
/// The file is put in write-ahead-log mode with `synchronous=FULL`: every commit is one fsync of the log (the
/// rollback journal's several fsyncs per commit cost 15 times as much) and stays durable across power loss.
final class SQLiteSessionSource: SQLSessionSource {
    let pool: EventLoopConnectionPool<SQLiteConnectionSource>
    let logger: Logger
    private let prepared = Mutex(false)

    init(storage: SQLiteConfiguration.Storage, logger: Logger) {
        self.logger = logger
        pool = EventLoopConnectionPool(
            source: SQLiteConnectionSource(configuration: .init(storage: storage, enableForeignKeys: true)),
            // Callers queue for the one connection; under a burst on a busy machine the wait is long, not an error.
            maxConnections: 1, requestTimeout: .seconds(120), logger: logger,
            on: MultiThreadedEventLoopGroup.singleton.next())
    }

    func withSession<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await pool.withConnection(logger: logger) { [self] connection in
            connection.eventLoop.makeFutureWithTask {
                let db = connection.sql(queryLogLevel: .trace)
                if !self.prepared.withLock({ $0 }) {
                    _ = try await db.raw("PRAGMA journal_mode=WAL").all()
                    try await db.raw("PRAGMA synchronous=FULL").run()
                    self.prepared.withLock { $0 = true }
                }
                return try await body(db)
            }
        }.get()
    }

    func shutdown() async throws {
        try await pool.close().get()
    }
}

/// A pool of PostgreSQL connections spread over the event loops.
struct PostgresSessionSource: SQLSessionSource {
    let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
    let logger: Logger

    init(url: String, maxConnectionsPerEventLoop: Int, logger: Logger) throws {
        self.logger = logger
        pool = EventLoopGroupConnectionPool(
            source: PostgresConnectionSource(sqlConfiguration: try SQLPostgresConfiguration(url: url)),
            // As for SQLite: under a burst a caller waits up to two minutes for a connection rather than failing a
            // request the database would have served (seen at 30 s with the whole suite on one busy cluster).
            maxConnectionsPerEventLoop: maxConnectionsPerEventLoop, requestTimeout: .seconds(120),
            pruneInterval: .seconds(60), logger: logger, on: MultiThreadedEventLoopGroup.singleton)
    }

    func withSession<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await pool.withConnection(logger: logger) { connection in
            connection.eventLoop.makeFutureWithTask { try await body(connection.sql(queryLogLevel: .trace)) }
        }.get()
    }

    func shutdown() async throws {
        try await pool.shutdownAsync()
    }
}
