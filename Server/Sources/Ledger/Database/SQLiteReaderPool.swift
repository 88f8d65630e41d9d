import Logging
import NIOPosix
import Synchronization

/// The SQLite readers: connections opened as reads need them, up to `limit`, each lent to one read at a time. A read
/// runs on the readers' own threads — one hand-off in and one out per read, none per statement — so a long read (a
/// console page over a large ledger) never holds a thread the request tasks need.
final class SQLiteReaderPool: Sendable {
    private let path: String
    private let limit: Int
    private let logger: Logger
    private let threads: NIOThreadPool
    private let executor: ThreadPoolTaskExecutor
    private let state = Mutex(State())

    private struct State {
        var idle: [PreparedSQLiteConnection] = []
        var opened = 0
        /// Reads waiting for a connection; resumed with one, or with nil to try again (an open failed).
        var waiting: [CheckedContinuation<PreparedSQLiteConnection?, Never>] = []
        var closed = false
    }

    init(path: String, threads threadCount: Int, limit: Int, logger: Logger) {
        self.path = path
        self.limit = max(1, limit)
        self.logger = logger
        threads = NIOThreadPool(numberOfThreads: max(1, threadCount))
        threads._start(threadNamePrefix: "SQLR-#")
        executor = ThreadPoolTaskExecutor(threads)
    }

    /// Runs `body` with a connection of its own, on a reader thread.
    func read<R: Sendable>(_ body: @escaping @Sendable (PreparedSQLiteConnection) async throws -> R) async throws -> R {
        try await withTaskExecutorPreference(executor) {
            let connection = try await acquire()
            defer { release(connection) }
            return try await body(connection)
        }
    }

    /// Closes the idle connections and the threads; reads after it fail.
    func shutdown() async throws {
        let (idle, waiting) = state.withLock { state in
            state.closed = true
            defer {
                state.idle.removeAll()
                state.waiting.removeAll()
            }
            return (state.idle, state.waiting)
        }
        idle.forEach { $0.close() }
        waiting.forEach { $0.resume(returning: nil) }
        try await threads.shutdownGracefully()
    }

    private enum Next {
        case use(PreparedSQLiteConnection)
        case open
        case wait
    }

    private func acquire() async throws -> PreparedSQLiteConnection {
        while true {
            let next = try state.withLock { state -> Next in
                guard !state.closed else { throw LedgerError.closed }
                if let connection = state.idle.popLast() { return .use(connection) }
                guard state.opened < limit else { return .wait }
                state.opened += 1
                return .open
            }
            switch next {
            case .use(let connection):
                return connection
            case .open:
                do {
                    return try PreparedSQLiteConnection(path: path, writer: false, logger: logger)
                } catch {
                    let waiter = state.withLock { state in
                        state.opened -= 1
                        return state.waiting.isEmpty ? nil : state.waiting.removeFirst()
                    }
                    waiter?.resume(returning: nil)
                    throw error
                }
            case .wait:
                let lent = await withCheckedContinuation {
                    (waiter: CheckedContinuation<PreparedSQLiteConnection?, Never>) in
                    let now = state.withLock { state -> (connection: PreparedSQLiteConnection?, retry: Bool) in
                        if let connection = state.idle.popLast() { return (connection, false) }
                        if state.closed || state.opened < limit { return (nil, true) }
                        state.waiting.append(waiter)
                        return (nil, false)
                    }
                    if now.connection != nil || now.retry { waiter.resume(returning: now.connection) }
                }
                if let lent { return lent }
            }
        }
    }

    private func release(_ connection: PreparedSQLiteConnection) {
        let (waiter, close) = state.withLock {
            state -> (CheckedContinuation<PreparedSQLiteConnection?, Never>?, Bool) in
            if state.closed { return (nil, true) }
            if !state.waiting.isEmpty { return (state.waiting.removeFirst(), false) }
            state.idle.append(connection)
            return (nil, false)
        }
        if close { connection.close() }
        waiter?.resume(returning: connection)
    }
}
