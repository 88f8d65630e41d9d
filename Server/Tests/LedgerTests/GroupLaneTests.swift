import LedgerTestSupport
import Synchronization
import Testing

@testable import Ledger

/// PostgreSQL's writer gathers concurrent writes in groups too: a lane joins only as writes queue, each group runs its
/// writes in the order of their keys so that groups never lock rows in opposite orders, and a deadlock one write of a
/// group meets is not its caller's answer while running alone may avoid it.
@Suite("Ledger: PostgreSQL's lanes and groups", .timeLimit(.hang))
struct GroupLaneTests {
    typealias Script = CommitChainTests.Script
    typealias Gate = CommitChainTests.Gate

    struct Deadlock: Error {}

    /// A write's body that deadlocks the first `count` times it runs.
    final class DeadlocksLeft: Sendable {
        private let left: Mutex<Int>
        init(_ count: Int) { left = Mutex(count) }

        func next() -> (any Error)? {
            left.withLock { left in
                defer { left -= 1 }
                return left > 0 ? Deadlock() : nil
            }
        }
    }

    @Test("a group runs its writes in the order of their keys, those without one last as they came")
    func groupRunsInKeyOrder() async throws {
        let script = Script()
        let writer = CommitChainTests.writer(on: script, maxGroupSize: 8)
        let gate = Gate()
        // The first write holds the lane: the next five queue and are taken as one group.
        let first = await CommitChainTests.submit("first", to: writer, on: script, gate: gate)
        var tasks = [first]
        for (name, key) in [("c", "user-3"), ("x", nil), ("a", "user-1"), ("y", nil), ("b", "user-2")] {
            tasks.append(await CommitChainTests.submit(name, lockOrder: key, to: writer, on: script))
        }
        gate.open()
        var answers: [Result<String, Refused>] = []
        for task in tasks { answers.append(await task.value) }
        await writer.close()
        #expect(answers == ["first", "c", "x", "a", "y", "b"].map { .success($0) })
        #expect(script.log == ["BEGIN", "first", "COMMIT AND CHAIN", "a", "b", "c", "x", "y", "COMMIT"])
    }

    /// A writer of `lanes` lanes on `script`, once every lane waits for writes (none is left to find the first
    /// writes queued on its own).
    static func idleWriter(on script: Script, lanes: Int, maxGroupSize: Int) async throws -> GroupCommitWriter {
        let writer = CommitChainTests.writer(on: script, lanes: lanes, maxGroupSize: maxGroupSize)
        #expect(try await eventually { writer.idleLanes == lanes })
        return writer
    }

    @Test("a lane joins when more writes wait than a running lane's group takes")
    func lanesJoinAsTheQueueDeepens() async throws {
        let script = Script()
        let writer = try await Self.idleWriter(on: script, lanes: 3, maxGroupSize: 2)
        let gate = Gate()
        let held = await CommitChainTests.submit("held", to: writer, on: script, gate: gate)
        // Two writes wait for the running lane (its next group takes two).
        let first = await CommitChainTests.submit("w1", to: writer, on: script)
        let second = await CommitChainTests.submit("w2", to: writer, on: script)
        // A third is more than that lane takes: a second lane starts and commits a group while the first is held.
        let third = await CommitChainTests.submit("w3", to: writer, on: script)
        #expect(await first.value == .success("w1"))
        #expect(await second.value == .success("w2"))
        #expect(!script.log.contains("held"))
        gate.open()
        #expect(await held.value == .success("held"))
        #expect(await third.value == .success("w3"))
        await writer.close()
    }

    @Test("with writes of a running lane waiting under its group's size, they join its next transaction")
    func shallowQueueWaitsForTheRunningLane() async throws {
        let script = Script()
        let writer = try await Self.idleWriter(on: script, lanes: 4, maxGroupSize: 8)
        let gate = Gate()
        let held = await CommitChainTests.submit("held", to: writer, on: script, gate: gate)
        var tasks = [held]
        for name in ["w1", "w2", "w3"] { tasks.append(await CommitChainTests.submit(name, to: writer, on: script)) }
        gate.open()
        for task in tasks { _ = await task.value }
        await writer.close()
        #expect(script.log == ["BEGIN", "held", "COMMIT AND CHAIN", "w1", "w2", "w3", "COMMIT"])
    }

    @Test("a write of a group that meets a deadlock runs again alone, and so does the rest of its group")
    func deadlockRunsEachAlone() async throws {
        let script = Script()
        let writer = CommitChainTests.writer(on: script, maxGroupSize: 8, transient: { $0 is Deadlock })
        let gate = Gate()
        let held = await CommitChainTests.submit("held", to: writer, on: script, gate: gate)
        // "b" deadlocks the first time it runs.
        let deadlocks = DeadlocksLeft(1)
        let once: @Sendable () -> (any Error)? = { deadlocks.next() }
        let a = await CommitChainTests.submit("a", lockOrder: "1", to: writer, on: script)
        let b = await CommitChainTests.submit("b", lockOrder: "2", to: writer, on: script, fails: once)
        let c = await CommitChainTests.submit("c", lockOrder: "3", to: writer, on: script)
        gate.open()
        #expect(await held.value == .success("held"))
        #expect(await a.value == .success("a"))
        #expect(await b.value == .success("b"))
        #expect(await c.value == .success("c"))
        await writer.close()
        #expect(
            script.log == [
                "BEGIN", "held", "COMMIT AND CHAIN", "a", "b", "ROLLBACK", "BEGIN", "a", "COMMIT", "BEGIN", "b",
                "COMMIT", "BEGIN", "c", "COMMIT",
            ])
    }

    @Test("a lone write that meets a deadlock runs once more: it commits then, or hears the second")
    func loneDeadlockRunsAgainOnce() async throws {
        for (deadlocks, answer) in [
            (1, Result<String, Refused>.success("a")), (2, .failure(Refused(statement: "\(Deadlock())"))),
        ] {
            let script = Script()
            let writer = CommitChainTests.writer(on: script, maxGroupSize: 8, transient: { $0 is Deadlock })
            let left = DeadlocksLeft(deadlocks)
            let task = await CommitChainTests.submit("a", to: writer, on: script, fails: { left.next() })
            #expect(await task.value == answer)
            await writer.close()
            let second = deadlocks == 1 ? ["BEGIN", "a", "COMMIT"] : ["BEGIN", "a", "ROLLBACK"]
            #expect(script.log == ["BEGIN", "a", "ROLLBACK"] + second, "\(deadlocks) deadlocks")
        }
    }

    /// PostgresNIO answers a prepared statement's error as a `PostgresError`, not the `PSQLError` of an unnamed one:
    /// the writer must know a deadlock in either.
    @Test(
        "PostgreSQL: two replicas' writes that lock two rows in opposite orders deadlock; the one PostgreSQL stops runs again, and both commit",
        .enabled(if: TestEngine.postgresURL != nil, "needs PostgreSQL"))
    func realDeadlockRunsAgain() async throws {
        try await TestEngine.postgres.withTwoPools { one, two in
            try await one.database.withSession { db in
                try await db.raw("CREATE TABLE deadlock_rows (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)").run()
                try await db.raw("INSERT INTO deadlock_rows (id, n) VALUES (1, 0), (2, 0)").run()
            }
            let runs = Mutex(0)
            let locked = [Gate(), Gate()]
            // Each write locks its first row, waits (its first run only) until the other has locked its own, then
            // asks for the other's row.
            let write = { @Sendable (database: LedgerDatabase, first: Int, add: Int) async throws in
                try await database.transaction { db in
                    let run = runs.withLock { runs in
                        runs += 1
                        return runs
                    }
                    try await db.raw("UPDATE deadlock_rows SET n = n + \(bind: add) WHERE id = \(bind: first)").run()
                    if run <= 2 {
                        locked[first - 1].open()
                        await locked[2 - first].wait()
                    }
                    try await db.raw("UPDATE deadlock_rows SET n = n + \(bind: add) WHERE id = \(bind: 3 - first)")
                        .run()
                }
            }
            async let a: Void = write(one.database, 1, 1)
            async let b: Void = write(two.database, 2, 10)
            try await a
            try await b
            #expect(runs.withLock { $0 } == 3, "one of the two ran again")
            let rows = try await one.database.read { db in
                try await db.raw("SELECT n FROM deadlock_rows ORDER BY id").all().map {
                    try $0.decode(column: "n", as: Int.self)
                }
            }
            #expect(rows == [11, 11])
        }
    }

    typealias Refused = CommitChainTests.Refused
}
