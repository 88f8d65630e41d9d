@preconcurrency import AsyncKit
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
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
/// commit is one fsync of the log and stays durable across power loss. Most checkpoints of the log run beside the
/// writer (``SQLiteCheckpointer``).
final class SQLiteSessionSource: SQLSessionSource {
    let writeLanes = 1
    private let path: String
    /// A file made for an in-memory ledger, removed at shutdown.
    private let isTemporary: Bool
    private let readers: SQLiteReaderPool
    /// Runs most of the writer's checkpoints beside it.
    let checkpointer: SQLiteCheckpointer
    private let writer = Mutex<Task<PreparedSQLiteConnection, any Error>?>(nil)
    /// The writer's own thread: the lane's code and its statements run there, one after the other.
    private let writerThread = NIOThreadPool(numberOfThreads: 1)
    let writeExecutor: (any TaskExecutor)?
    private let logger: Logger

    /// - Parameters:
    ///   - path: the database file, or nil for a temporary one (an in-memory ledger, which readers on other
    ///     connections must still see).
    ///   - checkpointStep: how many pages the write-ahead log grows between checkpoints beside the writer.
    ///   - checkpointFinalStep: how many it grows between them in the last step before the limit.
    ///   - checkpointLimit: the log's length, in pages, at which the writer checkpoints itself.
    init(
        path: String?, checkpointStep: Int = 4_000, checkpointFinalStep: Int = 250, checkpointLimit: Int = 32_000,
        logger: Logger
    ) {
        self.logger = logger
        isTemporary = path == nil
        self.path =
            path
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "ordersafe-ledger-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).sqlite3"
            ).path
        writerThread._start(threadNamePrefix: "SQLW-#")  // named apart from other pools' threads in a profile
        writeExecutor = ThreadPoolTaskExecutor(writerThread)
        readers = SQLiteReaderPool(
            path: self.path, threads: System.coreCount, limit: 2 * System.coreCount, logger: logger)
        checkpointer = SQLiteCheckpointer(
            path: self.path, step: checkpointStep, finalStep: checkpointFinalStep, limit: checkpointLimit,
            logger: logger)
    }

    /// The writer connection, opened once on the writer's thread; the log mode is set before any reader opens the file.
    private func writerConnection() async throws -> PreparedSQLiteConnection {
        let task = writer.withLock { writer in
            if let writer { return writer }
            let opening = Task(executorPreference: writeExecutor) { [path, checkpointer, logger] in
                try PreparedSQLiteConnection(path: path, writer: true, checkpointer: checkpointer, logger: logger)
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
        return try await readers.read(body)
    }

    func writeSession(_ body: @escaping @Sendable (any SQLDatabase) async -> Void) async throws {
        await body(try await writerConnection())
    }

    func shutdown() async throws {
        try await readers.shutdown()
        if let task = writer.withLock({ $0 }), let connection = try? await task.value {
            connection.close()
        }
        try await checkpointer.shutdown()
        try await writerThread.shutdownGracefully()
        if isTemporary {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }
}

/// PostgreSQL: a pool of connections spread over the event loops, shared by reads and the writer's lanes.
struct PostgresSessionSource: SQLSessionSource {
    let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
    let logger: Logger
    let writeLanes: Int
    let writeExecutor: (any TaskExecutor)? = nil
    private let statements = PreparedPostgresStatements()

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

    /// The body runs on its connection's event loop (``EventLoopTaskExecutor``), where the connection's replies
    /// arrive.
    func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await pool.withConnection(logger: logger) { [statements] connection in
            let promise = connection.eventLoop.makePromise(of: R.self)
            Task(executorPreference: EventLoopTaskExecutor(connection.eventLoop)) {
                do {
                    promise.succeed(
                        try await body(PreparedPostgresConnection(connection: connection, statements: statements)))
                } catch {
                    promise.fail(error)
                }
            }
            return promise.futureResult
        }.get()
    }

    func writeSession(_ body: @escaping @Sendable (any SQLDatabase) async -> Void) async throws {
        try await read { db in await body(db) }
    }

    func shutdown() async throws {
        try await pool.shutdownAsync()
    }
}
