import SQLKit
import Synchronization

/// Gathers the writes of concurrent callers into one database transaction, so that many of them share one commit
/// (one sync of the log to disk) instead of paying one each.
///
/// A write that throws is answered with its error and the others of its group run again without it, in a new
/// transaction (cheaper than a savepoint around each write, since writes rarely throw); when the commit itself
/// fails, each write of the group runs again alone, so only the one at fault fails. A caller is answered only once
/// the transaction holding its write has committed: nothing is acknowledged that could still be lost. A group
/// starts as soon as a lane is free, so a lone write waits for nobody; writes that arrive while a group runs form
/// the next one, up to `maxGroupSize`.
///
/// SQLite has one lane (its single writer); PostgreSQL several per replica, each on a pooled connection.
final class GroupCommitWriter: Sendable {
    /// Lends a lane a connection for one group.
    typealias Session = @Sendable (@escaping @Sendable (any SQLDatabase) async -> Void) async throws -> Void

    let maxGroupSize: Int
    private let begin: String
    private let queue = Mutex(Queue())
    private let lanes: Mutex<[Task<Void, Never>]> = Mutex([])

    private struct Queue: ~Copyable {
        var writes: [any PendingWrite] = []
        var head = 0
        var idle: [CheckedContinuation<Void, Never>] = []
        var closed = false

        var isEmpty: Bool { head == writes.count }

        /// The next group: one exclusive write alone, else up to `limit` grouped writes in arrival order.
        mutating func take(upTo limit: Int) -> [any PendingWrite] {
            var group: [any PendingWrite] = []
            while head < writes.count, group.count < limit {
                let next = writes[head]
                if next.exclusive && !group.isEmpty { break }
                group.append(next)
                head += 1
                if next.exclusive { break }
            }
            if head == writes.count {
                writes.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= writes.count {
                // Under a load that never lets the queue drain, the writes already taken are dropped here.
                writes.removeFirst(head)
                head = 0
            }
            return group
        }
    }

    /// - Parameters:
    ///   - lanes: how many groups may run at once (1 for SQLite).
    ///   - begin: the statement that opens a group's transaction (`BEGIN IMMEDIATE` on SQLite takes the write lock
    ///     at once, so a group never fails busy halfway).
    ///   - executor: where the lanes run (the SQLite writer's thread), else the shared pool.
    init(
        lanes laneCount: Int, maxGroupSize: Int, begin: String, executor: (any TaskExecutor)?,
        session: @escaping Session
    ) {
        self.maxGroupSize = max(1, maxGroupSize)
        self.begin = begin
        let tasks = (0..<max(1, laneCount)).map { _ in
            Task(executorPreference: executor) { [self] in await runLane(session) }
        }
        lanes.withLock { $0 = tasks }
    }

    /// Queues `write`; it is answered through its own continuation.
    func submit(_ write: any PendingWrite) {
        let (accepted, waking) = queue.withLock { queue -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !queue.closed else { return (false, nil) }
            queue.writes.append(write)
            return (true, queue.idle.popLast())
        }
        guard accepted else {
            write.abandoned(LedgerError.closed)
            return
        }
        waking?.resume()
    }

    /// Lets the lanes finish what is queued, then stops them.
    func close() async {
        let waiting = queue.withLock { queue in
            queue.closed = true
            defer { queue.idle.removeAll() }
            return queue.idle
        }
        waiting.forEach { $0.resume() }
        for lane in lanes.withLock({ $0 }) { await lane.value }
    }

    private func runLane(_ session: Session) async {
        while let group = await nextGroup() {
            do {
                try await session { db in await self.execute(group, on: db) }
            } catch {
                // No connection for the group: nothing of it ran.
                group.forEach { $0.abandoned(error) }
            }
        }
    }

    private func nextGroup() async -> [any PendingWrite]? {
        while true {
            let (group, closed) = queue.withLock { queue in (queue.take(upTo: maxGroupSize), queue.closed) }
            if !group.isEmpty { return group }
            if closed { return nil }
            await withCheckedContinuation { (idle: CheckedContinuation<Void, Never>) in
                let wakeNow = queue.withLock { queue in
                    if !queue.isEmpty || queue.closed { return true }
                    queue.idle.append(idle)
                    return false
                }
                if wakeNow { idle.resume() }
            }
        }
    }

    private func execute(_ group: [any PendingWrite], on db: any SQLDatabase) async {
        if group.count == 1, group[0].exclusive {
            _ = await group[0].run(db)
            group[0].committed()
            return
        }
        var pending = group
        while !pending.isEmpty {
            do {
                try await db.sql(LedgerSQL(begin)).run()
            } catch {
                pending.forEach { $0.abandoned(error) }
                return
            }
            var failed: Int?
            for (index, write) in pending.enumerated() where await !write.run(db) {
                failed = index
                break
            }
            if let failed {
                // One write threw: the transaction is rolled back, that write answered with its error, and the
                // others run again without it.
                do {
                    try await db.sql("ROLLBACK").run()
                } catch {
                    pending.forEach { $0.abandoned(error) }
                    return
                }
                pending.remove(at: failed).committed()
                continue
            }
            do {
                try await db.sql("COMMIT").run()
                pending.forEach { $0.committed() }
            } catch {
                try? await db.sql("ROLLBACK").run()
                guard pending.count > 1 else {
                    pending.forEach { $0.abandoned(error) }
                    return
                }
                // Which write made the commit fail (a deferred constraint) is unknown: each runs again alone.
                for write in pending { await execute([write], on: db) }
            }
            return
        }
    }
}

/// A write waiting for its group.
protocol PendingWrite: Sendable {
    /// Runs alone on the connection, outside any transaction (migrations, maintenance).
    var exclusive: Bool { get }
    /// Runs the write's body; false when it threw.
    func run(_ db: any SQLDatabase) async -> Bool
    /// Its transaction committed, or it threw and is out of the group: answers with the body's result, or the error
    /// the body threw.
    func committed()
    /// Its transaction did not commit: answers with `error`, or the error the body threw.
    func abandoned(_ error: any Error)
}

/// A caller's write and the continuation that answers it, exactly once.
final class Write<R: Sendable>: PendingWrite {
    let exclusive: Bool
    private let body: @Sendable (any SQLDatabase) async throws -> R
    private let state: Mutex<(continuation: CheckedContinuation<R, any Error>?, outcome: Result<R, any Error>?)>

    init(
        exclusive: Bool, body: @escaping @Sendable (any SQLDatabase) async throws -> R,
        continuation: CheckedContinuation<R, any Error>
    ) {
        self.exclusive = exclusive
        self.body = body
        state = Mutex((continuation, nil))
    }

    func run(_ db: any SQLDatabase) async -> Bool {
        let outcome: Result<R, any Error>
        do {
            outcome = .success(try await body(db))
        } catch {
            outcome = .failure(error)
        }
        state.withLock { $0.outcome = outcome }
        if case .success = outcome { return true }
        return false
    }

    func committed() {
        answer { outcome in outcome ?? .failure(LedgerError.closed) }
    }

    func abandoned(_ error: any Error) {
        answer { outcome in
            if case .failure(let own)? = outcome { return .failure(own) }
            return .failure(error)
        }
    }

    private func answer(_ result: (Result<R, any Error>?) -> Result<R, any Error>) {
        let taken = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation.map { ($0, result(state.outcome)) }
        }
        if let (continuation, result) = taken { continuation.resume(with: result) }
    }
}
