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

    @Test("a lone write that meets a deadlock hears it")
    func loneDeadlockIsAnswered() async throws {
        let script = Script()
        let writer = CommitChainTests.writer(on: script, maxGroupSize: 8, transient: { $0 is Deadlock })
        let task = await CommitChainTests.submit("a", to: writer, on: script, fails: { Deadlock() })
        #expect(await task.value == .failure(Refused(statement: "\(Deadlock())")))
        await writer.close()
        #expect(script.log == ["BEGIN", "a", "ROLLBACK"])
    }

    typealias Refused = CommitChainTests.Refused
}
