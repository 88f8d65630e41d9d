import Foundation
import Ledger
import LedgerTestSupport
import SQLKit
import Synchronization
import Testing

/// The group-commit writer: many concurrent writes share transactions, yet each caller hears "done" only for what
/// committed, and one write's failure never passes for another's success, nor sinks the others of its group.
@Suite("Ledger: group commit")
struct GroupCommitTests {
    /// A scratch pair of tables: a child row must name a parent, checked only at commit (deferred), so a write can
    /// succeed on its own and still make its group's commit fail.
    static func prepare(_ database: LedgerDatabase) async throws {
        try await database.withSession { db in
            try await db.raw("CREATE TABLE gc_parent (id INTEGER PRIMARY KEY)").run()
            try await db.raw(
                """
                CREATE TABLE gc_child (n INTEGER PRIMARY KEY,
                    parent INTEGER REFERENCES gc_parent(id) DEFERRABLE INITIALLY DEFERRED)
                """
            ).run()
            try await db.raw("INSERT INTO gc_parent (id) VALUES (1)").run()
        }
    }

    enum Outcome: Sendable, Equatable { case done, threw, failedWithGroup }

    /// How many times each write's job ran.
    final class RunCounts: Sendable {
        private let runs = Mutex<[Int: Int]>([:])
        func count(_ n: Int) { runs.withLock { $0[n, default: 0] += 1 } }
        var counted: [Int: Int] { runs.withLock { $0 } }
    }

    struct Refused: Error {}

    @Test(
        "every answer matches what committed: thrown writes and failed groups leave nothing, the rest all of theirs",
        arguments: TestEngine.available)
    func answersMatchCommits(engine: TestEngine) async throws {
        try await engine.withLedger { database, _ in
            try await Self.prepare(database)
            // 300 writes at once: every 13th throws after writing; every 50th writes an orphan (its group cannot commit).
            let answers = await withTaskGroup(of: (Int, Outcome).self) { group in
                for n in 1...300 {
                    group.addTask {
                        do {
                            try await database.transaction { db in
                                try await db.raw(
                                    "INSERT INTO gc_child (n, parent) VALUES (\(bind: n), \(bind: n % 50 == 0 ? 999 : 1))"
                                ).run()
                                if n % 13 == 0 { throw Refused() }
                            }
                            return (n, .done)
                        } catch is Refused {
                            return (n, .threw)
                        } catch {
                            return (n, .failedWithGroup)
                        }
                    }
                }
                var answers: [Int: Outcome] = [:]
                for await (n, outcome) in group { answers[n] = outcome }
                return answers
            }
            let stored = Set(
                try await database.read { db in
                    try await db.raw("SELECT n FROM gc_child").all().map { try $0.decode(column: "n", as: Int.self) }
                })
            #expect(answers.count == 300)
            for (n, outcome) in answers {
                switch outcome {
                case .done: #expect(stored.contains(n), "write \(n) was answered done but is not in the database")
                case .threw, .failedWithGroup: #expect(!stored.contains(n), "write \(n) failed but is in the database")
                }
                if n % 13 == 0 {
                    #expect(outcome == .threw, "write \(n) threw; its caller must hear its own error")
                } else if n % 50 == 0 {
                    #expect(outcome == .failedWithGroup, "write \(n) broke its group's commit yet was answered done")
                } else {
                    #expect(outcome == .done, "write \(n) did nothing wrong but failed with a write of its group")
                }
            }
        }
    }

    @Test(
        "a write's after-commit jobs run once when it commits, never when it fails, however often its group ran it",
        arguments: TestEngine.available)
    func afterCommitJobsRunOnce(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            // 300 writes at once, each queueing a job; every 13th throws after queueing it. A write that threw is
            // taken out of its group and the others run again: each must leave the jobs of the run that committed.
            let runs = RunCounts()
            let threw = await withTaskGroup(of: Int?.self) { group in
                for n in 1...300 {
                    group.addTask {
                        do {
                            try await ledger.atomically { write in
                                await write.afterCommit { runs.count(n) }
                                if n % 13 == 0 { throw Refused() }
                            }
                            return nil
                        } catch {
                            return n
                        }
                    }
                }
                var threw: Set<Int> = []
                for await n in group { if let n { threw.insert(n) } }
                return threw
            }
            #expect(threw == Set((1...300).filter { $0 % 13 == 0 }))
            let counted = runs.counted
            for n in 1...300 {
                let ran = counted[n, default: 0]
                #expect(ran == (n % 13 == 0 ? 0 : 1), "write \(n)'s job ran \(ran) times")
            }
        }
    }

    @Test(
        "operations given a write's connection join it: they commit together, or not at all",
        arguments: TestEngine.available
    )
    func nestedWritesJoin(engine: TestEngine) async throws {
        try await engine.withLedger { database, _ in
            try await Self.prepare(database)
            try await database.transaction { db in
                try await db.raw("INSERT INTO gc_child (n, parent) VALUES (1, 1)").run()
                try await database.transaction(joining: db) { inner in
                    try await inner.raw("INSERT INTO gc_child (n, parent) VALUES (2, 1)").run()
                }
                // A read inside the write sees the write's own rows.
                let seen = try await database.read(joining: db) { reader in
                    try await reader.raw("SELECT COUNT(*) AS c FROM gc_child").first()!
                }
                #expect(try seen.decode(column: "c", as: Int.self) == 2)
            }
            // A joined part that throws fails the whole write, even when its caller catches the error and goes on.
            await #expect(throws: Refused.self) {
                try await database.transaction { db in
                    try await db.raw("INSERT INTO gc_child (n, parent) VALUES (3, 1)").run()
                    try? await database.transaction(joining: db) { inner in
                        try await inner.raw("INSERT INTO gc_child (n, parent) VALUES (4, 1)").run()
                        throw Refused()
                    }
                }
            }
            // The outer write throwing takes its joined parts with it.
            await #expect(throws: Refused.self) {
                try await database.transaction { db in
                    try await database.transaction(joining: db) { inner in
                        try await inner.raw("INSERT INTO gc_child (n, parent) VALUES (5, 1)").run()
                    }
                    throw Refused()
                }
            }
            let stored = try await database.read { db in
                try await db.raw("SELECT n FROM gc_child ORDER BY n").all().map {
                    try $0.decode(column: "n", as: Int.self)
                }
            }
            #expect(stored == [1, 2])
        }
    }
}
