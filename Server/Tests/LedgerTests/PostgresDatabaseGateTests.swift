import LedgerTestSupport
import Synchronization
import Testing

/// The suite's PostgreSQL databases are gated (``PostgresDatabaseGate``) so its connections stay under the cluster's
/// limit: the gate must hold the others back, let them all through in turn, and never make a task wait for itself.
@Suite("Test support: PostgreSQL's databases let in a few at a time")
struct PostgresDatabaseGateTests {
    @Test("eight at once through a gate of two: two inside at most, and all eight run")
    func holdsTheRestBack() async throws {
        let gate = PostgresDatabaseGate(limit: 2)
        let inside = Inside()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await gate.admitting {
                        inside.counts.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        try await Task.sleep(for: .milliseconds(20))
                        inside.counts.withLock {
                            $0.now -= 1
                            $0.ran += 1
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = inside.counts.withLock { $0 }
        #expect(seen.most == 2)
        #expect(seen.ran == 8)
    }

    /// How many bodies are inside the gate now, the most there were at once, and how many ran.
    final class Inside: Sendable {
        let counts = Mutex((now: 0, most: 0, ran: 0))
    }

    @Test(
        "a task inside opens a second database without waiting for itself; a body that throws gives its place back",
        .timeLimit(.hang))
    func nestedAndFailed() async throws {
        let gate = PostgresDatabaseGate(limit: 1)
        #expect(try await gate.admitting { try await gate.admitting { 42 } } == 42)
        struct Failed: Error {}
        await #expect(throws: Failed.self) { try await gate.admitting { throw Failed() } }
        #expect(try await gate.admitting { "the place was given back" } == "the place was given back")
    }
}
