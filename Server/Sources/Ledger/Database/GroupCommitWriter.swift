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
/// Given a `chain` statement (PostgreSQL's `COMMIT AND CHAIN`), a lane that finds writes waiting when its group is
/// ready to commit takes the next group first and commits with that statement, which opens the next group's
/// transaction in the same round trip: under load a write is one round trip fewer (no `BEGIN`). A transaction is
/// chained only for a group already taken, so no connection waits idle inside a transaction; should the commit fail,
/// the group taken goes back to the front of the queue.
///
/// SQLite has one lane (its single writer); PostgreSQL several per replica, each on a pooled connection, which join
/// as the queue deepens: a write queued while lanes run waits for one of them unless more than `maxGroupSize` writes
/// wait for each running lane already. Under load a few lanes then carry groups of several writes, one commit each,
/// where a write each had a lane and a commit of its own (on PostgreSQL a round trip); where the database is slower
/// to answer, the queue deepens and more lanes run.
///
/// Groups that run at once (`ordered`) must not deadlock over rows: each runs its writes in the order of their keys
/// (``PendingWrite/lockOrder``), so the rows keyed by them (a user's balances) are locked in the same order by every
/// group. A write whose body failed with a deadlock or a serialization failure of its database (`transient`), in a
/// group of several, is not answered with it: the group is rolled back and each of its writes runs again alone; a
/// write alone runs once more.
final class GroupCommitWriter: Sendable {
    /// Lends a lane a connection for one group.
    typealias Session = @Sendable (@escaping @Sendable (any SQLDatabase) async -> Void) async throws -> Void

    let maxGroupSize: Int
    private let begin: String
    private let chain: String?
    private let transient: @Sendable (any Error) -> Bool
    /// Whether groups run their writes in the order of their keys: groups that run at once could otherwise deadlock.
    private let ordered: Bool
    private let queue: Mutex<Queue>
    private let lanes: Mutex<[Task<Void, Never>]> = Mutex([])

    private struct Queue: ~Copyable {
        var writes: [any PendingWrite] = []
        var head = 0
        var idle: [CheckedContinuation<Void, Never>] = []
        /// The lanes not waiting in `idle`.
        var busy: Int
        var closed = false

        init(lanes: Int) {
            busy = lanes
        }

        var isEmpty: Bool { head == writes.count }

        /// An idle lane, counted busy, when the writes waiting call for one: no lane runs, or more than `limit`
        /// writes wait for each running lane.
        mutating func laneToWake(limit: Int) -> CheckedContinuation<Void, Never>? {
            guard busy == 0 || writes.count - head > busy * limit, let lane = idle.popLast() else { return nil }
            busy += 1
            return lane
        }

        /// The next group: one exclusive write alone (unless `transactional`, which takes none), else up to `limit`
        /// grouped writes, taken in arrival order and, when `ordered`, run in the order of their keys.
        mutating func take(upTo limit: Int, transactional: Bool = false, ordered: Bool) -> [any PendingWrite] {
            var group: [any PendingWrite] = []
            while head < writes.count, group.count < limit {
                let next = writes[head]
                if next.exclusive && (transactional || !group.isEmpty) { break }
                group.append(next)
                head += 1
                if next.exclusive { break }
            }
            if ordered, group.count > 1, group.contains(where: { $0.lockOrder != nil }) {
                // In the order of their keys, those without one last as they came.
                group = group.enumerated().sorted { a, b in
                    switch (a.element.lockOrder, b.element.lockOrder) {
                    case (let x?, let y?): x != y ? x < y : a.offset < b.offset
                    case (.some, nil): true
                    case (nil, .some): false
                    case (nil, nil): a.offset < b.offset
                    }
                }.map(\.element)
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
    ///   - chain: the statement that commits a group's transaction and opens the next one, where the engine has it.
    ///   - executor: where the lanes run (the SQLite writer's thread), else the shared pool.
    ///   - ordered: whether groups may run at once (several lanes or processes on one database), so that each must
    ///     run its writes in the order of their keys.
    ///   - transient: whether a write's error is a deadlock or serialization failure, which running alone may avoid.
    init(
        lanes laneCount: Int, maxGroupSize: Int, begin: String, chain: String? = nil, executor: (any TaskExecutor)?,
        ordered: Bool = false, transient: @escaping @Sendable (any Error) -> Bool = { _ in false },
        session: @escaping Session
    ) {
        self.maxGroupSize = max(1, maxGroupSize)
        self.begin = begin
        self.chain = chain
        self.ordered = ordered
        self.transient = transient
        queue = Mutex(Queue(lanes: max(1, laneCount)))
        let tasks = (0..<max(1, laneCount)).map { _ in
            Task(executorPreference: executor) { [self] in await runLane(session) }
        }
        lanes.withLock { $0 = tasks }
    }

    /// How many lanes wait for writes.
    var idleLanes: Int { queue.withLock { $0.idle.count } }

    /// Queues `write`; it is answered through its own continuation.
    func submit(_ write: any PendingWrite) {
        let (accepted, waking) = queue.withLock { queue -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !queue.closed else { return (false, nil) }
            queue.writes.append(write)
            return (true, queue.laneToWake(limit: maxGroupSize))
        }
        guard accepted else {
            write.abandoned(LedgerError.closed)
            return
        }
        waking?.resume()
    }

    /// When writes wait (none of them exclusive) and the engine can chain: the next group, taken, and the statement
    /// that commits the current one and opens its transaction.
    private func takeChained() -> (group: [any PendingWrite], commit: String)? {
        guard let chain else { return nil }
        let group = queue.withLock { $0.take(upTo: maxGroupSize, transactional: true, ordered: ordered) }
        return group.isEmpty ? nil : (group, chain)
    }

    /// Puts `group`, taken but not run, back at the front of the queue, and wakes an idle lane for it.
    private func requeue(_ group: [any PendingWrite]) {
        let waking = queue.withLock { queue in
            queue.writes.insert(contentsOf: group, at: queue.head)
            return queue.laneToWake(limit: 0)
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
                try await session { db in
                    // Groups chained to this one run on its connection, each in the transaction the last opened.
                    var next = await self.execute(group, on: db, chaining: true)
                    while let chained = next {
                        next = await self.execute(chained, on: db, inOpenTransaction: true, chaining: true)
                    }
                }
            } catch {
                // No connection for the group: nothing of it ran.
                group.forEach { $0.abandoned(error) }
            }
        }
    }

    private func nextGroup() async -> [any PendingWrite]? {
        while true {
            let (group, closed) = queue.withLock { queue in
                (queue.take(upTo: maxGroupSize, ordered: ordered), queue.closed)
            }
            if !group.isEmpty { return group }
            if closed { return nil }
            await withCheckedContinuation { (idle: CheckedContinuation<Void, Never>) in
                let wakeNow = queue.withLock { queue in
                    if !queue.isEmpty || queue.closed { return true }
                    queue.idle.append(idle)
                    queue.busy -= 1
                    return false
                }
                if wakeNow { idle.resume() }
            }
        }
    }

    /// Runs `group` in transactions of its own, in the one open on `db` first when `inOpenTransaction`. When
    /// `chaining`, the commit may take the next group and open its transaction: that group is returned, to run next
    /// on `db`. A write alone that fails with a `transient` error runs once more (`rerun`).
    private func execute(
        _ group: [any PendingWrite], on db: any SQLDatabase, inOpenTransaction: Bool = false, chaining: Bool = false,
        rerun: Bool = true
    ) async -> [any PendingWrite]? {
        if group.count == 1, group[0].exclusive {
            _ = await group[0].run(db)
            group[0].committed()
            return nil
        }
        var pending = group
        var open = inOpenTransaction
        while !pending.isEmpty {
            if !open {
                do {
                    try await db.sql(LedgerSQL(begin)).run()
                } catch {
                    pending.forEach { $0.abandoned(error) }
                    return nil
                }
            }
            open = false
            var failed: Int?
            for (index, write) in pending.enumerated() where await !write.run(db) {
                failed = index
                break
            }
            if let failed {
                // One write threw: the transaction is rolled back, that write answered with its error, and the
                // others run again without it; after a deadlock or serialization failure, each alone, that one too.
                do {
                    try await db.sql("ROLLBACK").run()
                } catch {
                    pending.forEach { $0.abandoned(error) }
                    return nil
                }
                if pending[failed].failure.map(transient) == true {
                    if pending.count > 1 {
                        for alone in pending { _ = await execute([alone], on: db) }
                        return nil
                    }
                    if rerun { return await execute(pending, on: db, rerun: false) }
                }
                pending.remove(at: failed).committed()
                continue
            }
            let next = chaining ? takeChained() : nil
            do {
                try await db.sql(LedgerSQL(next?.commit ?? "COMMIT")).run()
                pending.forEach { $0.committed() }
                return next?.group
            } catch {
                // A failed commit opened no transaction; the rollback makes sure (PostgreSQL only warns when none is
                // open).
                try? await db.sql("ROLLBACK").run()
                // The group taken goes back to the front of the queue, for any lane: this connection may be broken.
                if let next { requeue(next.group) }
                if pending.count > 1 {
                    // Which write made the commit fail (a deferred constraint) is unknown: each runs again alone.
                    for write in pending { _ = await execute([write], on: db) }
                } else {
                    pending.forEach { $0.abandoned(error) }
                }
                return nil
            }
        }
        return nil
    }
}

/// A write waiting for its group.
protocol PendingWrite: Sendable {
    /// Runs alone on the connection, outside any transaction (migrations, maintenance).
    var exclusive: Bool { get }
    /// Where the write's locks come in a group: writes are run in the order of their keys.
    var lockOrder: String? { get }
    /// Runs the write's body; false when it threw.
    func run(_ db: any SQLDatabase) async -> Bool
    /// The error its body threw when it last ran.
    var failure: (any Error)? { get }
    /// Its transaction committed, or it threw and is out of the group: answers with the body's result, or the error
    /// the body threw.
    func committed()
    /// Its transaction did not commit: answers with `error`, or the error the body threw.
    func abandoned(_ error: any Error)
}

/// A caller's write and the continuation that answers it, exactly once. Not generic: the result is kept as an
/// `any Sendable` and the caller's type appears only in the closure that resumes its continuation. As a generic class
/// (or with the result in a generic box), each call through ``PendingWrite`` ran generic code that looked up the
/// metadata of the result's optional, the continuation and their tuple at every access, the callers' types being
/// unknown where the engine asks the ledger for a transaction (43 of a fresh submission's 133 lookups, about 20,000
/// instructions: `scripts/bench/instructions`, docs/benchmarks.md).
final class Write: PendingWrite {
    let exclusive: Bool
    let lockOrder: String?
    private let body: @Sendable (any SQLDatabase) async throws -> any Sendable
    /// Resumes the caller's continuation with `outcome`.
    private let resume: @Sendable (_ outcome: Result<any Sendable, any Error>) -> Void
    /// What the body returned or threw when it last ran, and whether the caller was answered.
    private let state = Mutex<(outcome: Result<any Sendable, any Error>?, answered: Bool)>((nil, false))

    init<R: Sendable>(
        exclusive: Bool, lockOrder: String? = nil, body: @escaping @Sendable (any SQLDatabase) async throws -> R,
        continuation: CheckedContinuation<R, any Error>
    ) {
        self.exclusive = exclusive
        self.lockOrder = lockOrder
        self.body = { db in try await body(db) }
        resume = { outcome in
            switch outcome {
            case .success(let value as R): continuation.resume(returning: value)
            case .success(let value):
                continuation.resume(throwing: LedgerCorruption(detail: "a write returned a \(type(of: value))"))
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
    }

    func run(_ db: any SQLDatabase) async -> Bool {
        let outcome: Result<any Sendable, any Error>
        do {
            outcome = .success(try await body(db))
        } catch {
            outcome = .failure(error)
        }
        state.withLock { $0.outcome = outcome }
        if case .success = outcome { return true }
        return false
    }

    var failure: (any Error)? {
        state.withLock { state in
            if case .failure(let error)? = state.outcome { return error }
            return nil
        }
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

    private func answer(_ result: (Result<any Sendable, any Error>?) -> Result<any Sendable, any Error>) {
        let taken = state.withLock { state -> Result<any Sendable, any Error>? in
            guard !state.answered else { return nil }
            state.answered = true
            return result(state.outcome)
        }
        if let taken { resume(taken) }
    }
}
