@preconcurrency import AsyncKit
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit
import Synchronization

/// Where the ledger's connections come from: connections for reads, and for each lane of the writer a connection
/// for one group of writes.
protocol SQLSessionSource: Sendable {
    /// How many write groups may run at once.
    var writeLanes: Int { get }
    /// Where the lanes run, when not on the shared pool.
    var writeExecutor: (any TaskExecutor)? { get }
    /// Runs `body` on a connection that sees committed data and never waits behind a write group.
    func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Lends a lane the connection for one write group.
    func writeSession(_ body: @escaping @Sendable (any SQLDatabase) async -> Void) async throws
    func shutdown() async throws
}

/// SQLite: one writer connection (SQLite has a single writer; one connection turns lock contention into an orderly
/// queue and `BEGIN IMMEDIATE` never fails busy) and a pool of reader connections beside it. The file is in
/// write-ahead-log mode, so readers see the last commit and never wait for the writer, with `synchronous=FULL`: every
/// commit is one fsync of the log and stays durable across power loss.
final class SQLiteSessionSource: SQLSessionSource {
    let writeLanes = 1
    private let source: SQLiteConnectionSource
    private let readers: EventLoopGroupConnectionPool<SQLiteConnectionSource>
    private let writer = Mutex<Task<SQLiteConnection, any Error>?>(nil)
    /// The writer's own thread: its statements never queue behind readers' on the shared pool, and the lane's own
    /// code runs there too.
    private let writerThread = NIOThreadPool(numberOfThreads: 1)
    let writeExecutor: (any TaskExecutor)?
    private let logger: Logger

    init(storage: SQLiteConfiguration.Storage, logger: Logger) {
        self.logger = logger
        let configuration = SQLiteConfiguration(storage: storage, enableForeignKeys: true)
        writerThread.start()
        writeExecutor = ThreadPoolTaskExecutor(writerThread)
        source = SQLiteConnectionSource(configuration: configuration, threadPool: writerThread)
        readers = EventLoopGroupConnectionPool(
            source: SQLiteConnectionSource(configuration: configuration), maxConnectionsPerEventLoop: 2, requestTimeout: .seconds(120),
            logger: logger, on: MultiThreadedEventLoopGroup.singleton)
    }

    /// The writer connection, opened once; the log mode is set before any reader opens the file.
    private func writerConnection() async throws -> SQLiteConnection {
        let task = writer.withLock { writer in
            if let writer { return writer }
            let opening = Task { [source, logger] in
                let connection = try await source.makeConnection(logger: logger, on: MultiThreadedEventLoopGroup.singleton.next()).get()
                let db = connection.sql(queryLogLevel: .trace)
                _ = try await db.raw("PRAGMA journal_mode=WAL").all()
                try await db.raw("PRAGMA synchronous=FULL").run()
                try await db.raw("PRAGMA busy_timeout=10000").run()
                return connection
            }
            writer = opening
            return opening
        }
        do {
            return try await task.value
        } catch {
            // Opening failed (a bad path, a full disk): the next caller tries again.
            writer.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }

    func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        _ = try await writerConnection()
        return try await readers.withConnection(logger: logger) { connection in
            connection.eventLoop.makeFutureWithTask { try await body(connection.sql(queryLogLevel: .trace)) }
        }.get()
    }

    func writeSession(_ body: @escaping @Sendable (any SQLDatabase) async -> Void) async throws {
        await body(try await writerConnection().sql(queryLogLevel: .trace))
    }

    func shutdown() async throws {
        try await readers.shutdownAsync()
        if let task = writer.withLock({ $0 }), let connection = try? await task.value {
            try await connection.close().get()
        }
        try await writerThread.shutdownGracefully()
    }
}

/// PostgreSQL: a pool of connections spread over the event loops, shared by reads and the writer's lanes.
struct PostgresSessionSource: SQLSessionSource {
    let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
    let logger: Logger
    let writeLanes: Int
    let writeExecutor: (any TaskExecutor)? = nil

    init(url: String, maxConnectionsPerEventLoop: Int, logger: Logger) throws {
        self.logger = logger
        pool = EventLoopGroupConnectionPool(
            source: PostgresConnectionSource(sqlConfiguration: try SQLPostgresConfiguration(url: url)),
            // Under a burst a caller waits up to two minutes for a connection rather than failing a request the
            // database would have served (seen at 30 s with the whole suite on one busy cluster).
            maxConnectionsPerEventLoop: maxConnectionsPerEventLoop, requestTimeout: .seconds(120),
            pruneInterval: .seconds(60), logger: logger, on: MultiThreadedEventLoopGroup.singleton)
        // Half the pool writes, so reads always find a connection.
        writeLanes = max(1, maxConnectionsPerEventLoop * System.coreCount / 2)
    }

    func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await pool.withConnection(logger: logger) { connection in
            connection.eventLoop.makeFutureWithTask { try await body(connection.sql(queryLogLevel: .trace)) }
        }.get()
    }

    func writeSession(_ body: @escaping @Sendable (any SQLDatabase) async -> Void) async throws {
        try await read { db in await body(db) }
    }

    func shutdown() async throws {
        try await pool.shutdownAsync()
    }
}
