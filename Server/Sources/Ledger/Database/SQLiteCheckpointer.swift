import Logging
import NIOPosix
import Synchronization

/// Copies the SQLite write-ahead log back into the database file mostly on a thread and a connection of its own,
/// so the writer seldom stops to do it. SQLite's automatic checkpoint runs on the connection that commits: the commit
/// that crosses the log's limit copies up to a thousand pages and syncs the database file before it answers (in the
/// load profile, checkpoints were 7% of the writer's time, and their syncs more).
///
/// Here the writer's connection reports the log's length after each commit (``logGrew(to:)``, from its WAL hook,
/// which replaces the automatic checkpoint). Every `step` pages a passive checkpoint runs beside the writer: it copies
/// what no reader still needs and blocks neither the writer nor a reader. But it cannot empty a log the writer keeps
/// appending to, and only an emptied log starts again from its beginning; so at `limit` pages the writer checkpoints
/// itself, copying only what was appended since the last background checkpoint, and the log starts again.
///
/// A checkpoint copies each page once however often the log holds it, so the fewer checkpoints, the fewer copies of
/// the pages every commit changes (the tables' and time-ordered indexes' last pages, the trees' upper levels). But what
/// the writer copies at the limit holds its commit's answer. So the steps are long while the limit is far
/// (``nextRequest(after:step:finalStep:limit:)``) and `finalStep` pages apart in the last `step` before it.
final class SQLiteCheckpointer: Sendable {
    private let path: String
    private let step: Int
    private let finalStep: Int
    private let limit: Int
    private let logger: Logger
    private let thread = NIOThreadPool(numberOfThreads: 1)
    /// The log's length at which the writer next asks for a background checkpoint (only the writer's thread uses it).
    private let nextRequest: Atomic<Int>
    /// The log's length at the writer's last commit (only the writer's thread uses it).
    private let lastLength = Atomic<Int>(0)
    /// Whether a background checkpoint is queued or running: commits meanwhile ask for none.
    private let pending = Atomic<Bool>(false)
    private let connection = Mutex<PreparedSQLiteConnection?>(nil)
    private let completedCount = Atomic<Int>(0)

    /// - Parameters:
    ///   - step: how many pages the log grows between background checkpoints while the limit is more than a step away.
    ///   - finalStep: how many it grows between them in the last step before the limit (at most `step`).
    ///   - limit: the log's length, in pages, at which the writer checkpoints itself (SQLite checkpoints at 1,000).
    init(path: String, step: Int, finalStep: Int, limit: Int, logger: Logger) {
        self.path = path
        self.step = max(1, step)
        self.finalStep = min(max(1, finalStep), self.step)
        self.limit = max(1, limit)
        self.logger = logger
        nextRequest = Atomic(Self.nextRequest(after: 0, step: self.step, finalStep: self.finalStep, limit: self.limit))
        thread._start(threadNamePrefix: "SQLC-#")
    }

    /// How many background checkpoints have run.
    var completed: Int { completedCount.load(ordering: .relaxed) }

    /// Called on the writer's thread after each commit with the pages now in the log. Queues a background checkpoint
    /// each `step` pages (unless one is queued or running) and never blocks; returns whether the log has reached
    /// `limit`, when the writer must checkpoint itself.
    func logGrew(to pages: Int) -> Bool {
        if pages < lastLength.exchange(pages, ordering: .relaxed) {
            nextRequest.store(nextRequest(after: 0), ordering: .relaxed)  // the log started again
        }
        if pages >= limit {
            return true
        }
        if pages >= nextRequest.load(ordering: .relaxed) {
            nextRequest.store(nextRequest(after: pages), ordering: .relaxed)
            requestCheckpoint()
        }
        return false
    }

    /// The log's length at which the next background checkpoint is asked for, one being asked for at `pages`.
    private func nextRequest(after pages: Int) -> Int {
        Self.nextRequest(after: pages, step: step, finalStep: finalStep, limit: limit)
    }

    /// A `step` on from `pages` while that ends a step or more before `limit`; then the start of that last step,
    /// and `finalStep` on from there.
    static func nextRequest(after pages: Int, step: Int, finalStep: Int, limit: Int) -> Int {
        let coarse = pages + step
        return coarse <= limit - step ? coarse : max(pages + finalStep, min(coarse, limit - step))
    }

    private func requestCheckpoint() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        thread.submit { [self] state in
            defer { pending.store(false, ordering: .releasing) }
            guard case .active = state else { return }
            checkpoint()
        }
    }

    /// Returns once the checkpoint queued before it, if any, has run.
    func settle() async {
        _ = try? await thread.runIfActive {}
    }

    /// Lets a queued checkpoint finish, then closes the checkpointer's connection.
    func shutdown() async throws {
        try await thread.shutdownGracefully()
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }

    private func checkpoint() {
        do {
            let pages = try connection.withLock { connection in
                let opened = try connection ?? PreparedSQLiteConnection(path: path, writer: false, logger: logger)
                connection = opened
                return try opened.checkpoint()
            }
            completedCount.add(1, ordering: .relaxed)
            logger.debug(
                "Checkpointed the write-ahead log",
                metadata: ["log_pages": "\(pages.log)", "copied_pages": "\(pages.copied)"])
        } catch {
            // The next commit past the threshold asks again; meanwhile the log only grows.
            logger.warning("Checkpoint of the write-ahead log failed", metadata: ["error": "\(error)"])
        }
    }
}
