import Foundation
import LedgerTestSupport
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import Synchronization
import Testing

@testable import Ledger

/// On PostgreSQL a lane that finds writes waiting when its group commits takes the next group and commits with
/// `COMMIT AND CHAIN`, which opens that group's transaction in the same round trip. Each write must still commit in a
/// transaction of its own answered only after it committed, a failed chained commit must leave the group it took to
/// run in a new transaction (on any lane), and a write that must run outside a transaction is never chained into one.
@Suite("Ledger: the next group's transaction opened by the last one's commit", .timeLimit(.hang))
struct CommitChainTests {
    /// A connection that records the statements sent to it (and the writes' own steps), failing those it is told to.
    final class Script: SQLDatabase, Sendable {
        private let state = Mutex<(log: [String], failing: [String: Int])>(([], [:]))
        var logger: Logger { Logger(label: "test") }
        var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
        var dialect: any SQLDialect { PostgresDialect() }

        init(failing: [String: Int] = [:]) {
            state.withLock { $0.failing = failing }
        }

        var log: [String] { state.withLock { $0.log } }

        func note(_ step: String) { state.withLock { $0.log.append(step) } }

        func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
            let text = (query as? LedgerSQL)?.sqliteText ?? "?"
            let fails = state.withLock { state in
                state.log.append(text)
                guard let left = state.failing[text], left > 0 else { return false }
                state.failing[text] = left - 1
                return true
            }
            if fails { throw Refused(statement: text) }
        }

        func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
            -> EventLoopFuture<Void>
        {
            eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
        }
    }

    struct Refused: Error, Equatable { let statement: String }

    /// A gate a write's body waits at until the test opens it.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.open { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func open() {
            state.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }.forEach { $0.resume() }
        }
    }

    /// `lanes` lanes of groups of up to `maxGroupSize` writes on `script` (one lane of single-write groups unless
    /// told), chained as PostgreSQL's writer is; `transient` as the writer is given it.
    static func writer(
        on script: Script, lanes: Int = 1, maxGroupSize: Int = 1,
        transient: @escaping @Sendable (any Error) -> Bool = { _ in false }
    ) -> GroupCommitWriter {
        GroupCommitWriter(
            lanes: lanes, maxGroupSize: maxGroupSize, begin: "BEGIN", chain: "COMMIT AND CHAIN", executor: nil,
            ordered: true, transient: transient, session: { body in await body(script) })
    }

    /// Submits a write named `name` (its body notes the name, after waiting at `gate` if given, then throws what
    /// `fails` gives, if anything) and returns the task that hears its answer, once the writer has queued it.
    static func submit(
        _ name: String, exclusive: Bool = false, lockOrder: String? = nil, to writer: GroupCommitWriter,
        on script: Script, gate: Gate? = nil, fails: (@Sendable () -> (any Error)?)? = nil
    ) async -> Task<Result<String, Refused>, Never> {
        let (queued, signal) = AsyncStream.makeStream(of: Void.self)
        let task = Task { () -> Result<String, Refused> in
            do {
                let answer: String = try await withCheckedThrowingContinuation { continuation in
                    writer.submit(
                        Write(
                            exclusive: exclusive, lockOrder: lockOrder,
                            body: { _ in
                                await gate?.wait()
                                script.note(name)
                                if let error = fails?() { throw error }
                                return name
                            }, continuation: continuation))
                    signal.finish()
                }
                return .success(answer)
            } catch {
                return .failure(error as? Refused ?? Refused(statement: "\(error)"))
            }
        }
        for await _ in queued {}
        return task
    }

    /// Runs the writes `names` (`exclusive` ones outside any transaction) on one lane over `script`: the first holds
    /// its transaction open until all the others are queued. Returns each one's answer, in order, once the writer closed.
    static func answers(_ names: [String], exclusive: Set<String> = [], on script: Script) async
        -> [Result<String, Refused>]
    {
        let writer = Self.writer(on: script)
        let gate = Gate()
        var tasks: [Task<Result<String, Refused>, Never>] = []
        for (index, name) in names.enumerated() {
            tasks.append(
                await Self.submit(
                    name, exclusive: exclusive.contains(name), to: writer, on: script, gate: index == 0 ? gate : nil))
        }
        gate.open()
        var answers: [Result<String, Refused>] = []
        for task in tasks { answers.append(await task.value) }
        await writer.close()
        return answers
    }

    @Test("writes waiting when a group commits run in the transaction its COMMIT AND CHAIN opened, with no BEGIN")
    func chainsWhileWritesWait() async throws {
        let script = Script()
        #expect(await Self.answers(["a", "b", "c"], on: script) == [.success("a"), .success("b"), .success("c")])
        #expect(script.log == ["BEGIN", "a", "COMMIT AND CHAIN", "b", "COMMIT AND CHAIN", "c", "COMMIT"])
    }

    @Test("with nothing waiting a group commits plainly: no connection waits inside a transaction")
    func noChainWhenIdle() async throws {
        let script = Script()
        let writer = Self.writer(on: script)
        #expect(await Self.submit("a", to: writer, on: script).value == .success("a"))
        #expect(await Self.submit("b", to: writer, on: script).value == .success("b"))
        await writer.close()
        #expect(script.log == ["BEGIN", "a", "COMMIT", "BEGIN", "b", "COMMIT"])
    }

    @Test("a chained commit that fails answers its group with the error; the group it took runs in a new transaction")
    func failedChainRequeues() async throws {
        let script = Script(failing: ["COMMIT AND CHAIN": 1])
        #expect(
            await Self.answers(["a", "b"], on: script) == [
                .failure(Refused(statement: "COMMIT AND CHAIN")), .success("b"),
            ])
        #expect(script.log == ["BEGIN", "a", "COMMIT AND CHAIN", "ROLLBACK", "BEGIN", "b", "COMMIT"])
    }

    @Test("a write that runs outside any transaction is not chained into one: the group before it commits plainly")
    func exclusiveNotChained() async throws {
        let script = Script()
        #expect(
            await Self.answers(["a", "migration", "b"], exclusive: ["migration"], on: script) == [
                .success("a"), .success("migration"), .success("b"),
            ])
        #expect(script.log == ["BEGIN", "a", "COMMIT", "migration", "BEGIN", "b", "COMMIT"])
    }
}
