import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Synchronization
import Testing

@Suite("Ledger job queue: leases, fencing, several workers")
struct JobQueueTests {
    static let now = Fixtures.now

    @Test(
        "a due job is claimed once, completed once; not-yet-due jobs wait; retry moves it",
        arguments: TestEngine.available)
    func lifecycle(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            try await ledger.enqueue(NewJob(kind: JobKind(rawValue: "query_order"), key: "A", runAt: Self.now))
            try await ledger.enqueue(NewJob(kind: JobKind(rawValue: "query_order"), key: "B", runAt: Self.now + 60))
            // keeps the earlier time
            try await ledger.enqueue(NewJob(kind: JobKind(rawValue: "query_order"), key: "A", runAt: Self.now + 30))
            let claimed = try await ledger.claimJobs(owner: "w1", limit: 10, lease: 30, now: Self.now)
            #expect(claimed.map(\.key) == ["A"])
            #expect(try await ledger.claimJobs(owner: "w2", limit: 10, lease: 30, now: Self.now + 1).isEmpty)  // leased
            #expect(try await ledger.complete(claimed[0], .retry(at: Self.now + 120, note: "NOTPAY"), at: Self.now))
            let b = try await ledger.claimJobs(owner: "w2", limit: 10, lease: 30, now: Self.now + 61)
            #expect(b.map(\.key) == ["B"])
            #expect(try await ledger.complete(b[0], .retry(at: Self.now + 1000, note: nil), at: Self.now + 61))
            let again = try await ledger.claimJobs(owner: "w2", limit: 10, lease: 30, now: Self.now + 121)
            #expect(again.map(\.key) == ["A"] && again[0].attempts == 2)
            #expect(try await ledger.complete(again[0], .done, at: Self.now + 121))
            #expect(try await ledger.complete(again[0], .done, at: Self.now + 122) == false)
            #expect(
                // B is due again
                try await ledger.claimJobs(owner: "w3", limit: 10, lease: 30, now: Self.now + 9999).map(\.key) == ["B"])
        }
    }

    @Test(
        "a lane claims only its kinds: a due statement waits for its lane, the order queries never behind it",
        arguments: TestEngine.available)
    func lanes(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            try await ledger.enqueue(NewJob(kind: .statements, key: "alipay", runAt: Self.now - 10))
            try await ledger.enqueue(NewJob(kind: .queryOrder, key: "OS1", runAt: Self.now))
            try await ledger.enqueue(NewJob(kind: .retryInbox, key: "inbox", runAt: Self.now))
            let queries = try await ledger.claimJobs(
                owner: "q", limit: 10, lease: 30, now: Self.now, lane: .except([.statements]))
            #expect(Set(queries.map(\.kind)) == [.queryOrder, .retryInbox])
            let statements = try await ledger.claimJobs(
                owner: "s", limit: 10, lease: 30, now: Self.now, lane: .only([.statements]))
            #expect(statements.map(\.key) == ["alipay"])
            #expect(try await ledger.claimJobs(owner: "a", limit: 10, lease: 30, now: Self.now).isEmpty)
        }
    }

    @Test(
        "a recurring job keeps the watermark it finished with, even when scheduled again at a restart",
        arguments: TestEngine.available)
    func watermark(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            try await ledger.enqueue(
                NewJob(kind: JobKind(rawValue: "appstore_history"), key: "appstore", runAt: Self.now))
            let first = try await ledger.claimJobs(owner: "w", limit: 1, lease: 60, now: Self.now)[0]
            #expect(first.payload == "")
            #expect(
                try await ledger.complete(
                    first, .retry(at: Self.now + 3600, note: nil, payload: "1795000000000"), at: Self.now))
            // a restart
            try await ledger.enqueue(
                NewJob(kind: JobKind(rawValue: "appstore_history"), key: "appstore", runAt: Self.now + 10))
            let second = try await ledger.claimJobs(owner: "w", limit: 1, lease: 60, now: Self.now + 10)[0]
            #expect(second.payload == "1795000000000")
            #expect(try await ledger.complete(second, .retry(at: Self.now + 3600, note: "down"), at: Self.now + 10))
            #expect(
                try await ledger.claimJobs(owner: "w", limit: 1, lease: 60, now: Self.now + 3600)[0].payload
                    == "1795000000000")
        }
    }

    @Test("a worker whose lease ran out is fenced off: its completion writes nothing", arguments: TestEngine.available)
    func fencing(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            try await ledger.enqueue(NewJob(kind: JobKind(rawValue: "query_order"), key: "A", runAt: Self.now))
            let slow = try await ledger.claimJobs(owner: "slow", limit: 1, lease: 10, now: Self.now)[0]
            let fast = try await ledger.claimJobs(owner: "fast", limit: 1, lease: 10, now: Self.now + 11)[0]
            #expect(fast.fence > slow.fence)
            #expect(try await ledger.complete(slow, .done, at: Self.now + 12) == false)
            #expect(try await ledger.complete(fast, .retry(at: Self.now + 100, note: nil), at: Self.now + 12))

            // Enqueued again while running: the running worker cannot complete it, and it is claimable at once.
            let running = try await ledger.claimJobs(owner: "w", limit: 1, lease: 60, now: Self.now + 100)[0]
            try await ledger.enqueue(NewJob(kind: JobKind(rawValue: "query_order"), key: "A", runAt: Self.now + 100))
            #expect(try await ledger.complete(running, .done, at: Self.now + 101) == false)
            #expect(try await ledger.claimJobs(owner: "w2", limit: 1, lease: 60, now: Self.now + 101).count == 1)
        }
    }

    @Test("four workers claiming 200 jobs concurrently take each exactly once", arguments: TestEngine.available)
    func concurrentWorkers(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            for index in 0..<200 {
                try await ledger.enqueue(
                    NewJob(kind: JobKind(rawValue: "query_order"), key: "O\(index)", runAt: Self.now))
            }
            let taken = try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var mine: [String] = []
                        while true {
                            let batch = try await ledger.claimJobs(
                                owner: "w\(worker)", limit: 7, lease: 300, now: Self.now)
                            if batch.isEmpty { return mine }
                            for job in batch {
                                #expect(try await ledger.complete(job, .done, at: Self.now))
                                mine.append(job.key)
                            }
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(taken.count == 200 && Set(taken).count == 200)
        }
    }

    @Test("an order's follow-up job is created with it, in one transaction", arguments: TestEngine.available)
    func followUp(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Self.now)
            var new = Fixtures.newOrder(version, product: "box", channel: .alipay)
            new.followUp = FollowUp(kind: .queryOrder, after: 60)
            let order = try await ledger.createOrder(new, identity: Fixtures.randomIdentity).order
            #expect(try await ledger.claimJobs(owner: "w", limit: 5, lease: 30, now: Self.now).isEmpty)
            #expect(
                try await ledger.claimJobs(owner: "w", limit: 5, lease: 30, now: Self.now + 60).map(\.key) == [
                    order.orderNo
                ])
        }
    }
}
