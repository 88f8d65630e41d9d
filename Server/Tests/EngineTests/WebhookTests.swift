import ChannelSupport
import Engine
import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Sandbox
import Synchronization
import Testing

@Suite("Merchant webhooks: transactional outbox, signed, at least once, with backoff and a delivery log")
struct WebhookTests {
    static let secret = "whsec-0123456789abcdef0123456789abcdef"

    /// The merchant's backend: checks every signature, fails the first `failures` requests, remembers event ids.
    final class Backend: Sendable {
        let received = Mutex<[String]>([])
        let remainingFailures: Mutex<Int>
        let clock: ManualClock

        init(failures: Int, clock: ManualClock) {
            remainingFailures = Mutex(failures)
            self.clock = clock
        }

        var transport: InProcessTransport {
            InProcessTransport { _, _, headers, body in
                #expect(
                    WebhookSignature.verify(
                        header: headers[WebhookSignature.headerName] ?? "", body: body, secret: WebhookTests.secret,
                        now: self.clock.now()))
                let fail = self.remainingFailures.withLock { count in
                    defer { count -= 1 }
                    return count > 0
                }
                if fail { return ProviderHTTPResponse(status: 500, headers: [:], body: []) }
                self.received.withLock { $0.append(headers["OrderSafe-Event-Id"] ?? "?") }
                return ProviderHTTPResponse(status: 204, headers: [:], body: [])
            }
        }
    }

    @Test(
        "every state change is an event; failures are retried with backoff until delivered; every attempt is logged",
        arguments: TestEngine.available)
    func delivery(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let clock = ManualClock(EngineFixtures.now)
            let version = try await ledger.saveCatalog(EngineFixtures.catalog, at: clock.now())
            let order = try await EngineFixtures.order(ledger, version: version)
            _ = try await ledger.fulfil(
                VerifiedPayment(
                    channel: .alipay, providerTransactionID: "T1", orderNo: order.orderNo, amount: order.amount,
                    cause: .notification, evidence: "inbox:1"), at: clock.now())
            let backend = Backend(failures: 4, clock: clock)
            let dispatcher = WebhookDispatcher(
                ledger: ledger, url: "https://merchant.example/hooks", secret: Self.secret,
                transport: backend.transport, clock: clock,
                logger: TestLog.logger, firstDelay: 10)
            var delivered = 0
            for _ in 0..<10 {
                delivered += try await dispatcher.deliverDue().delivered
                clock.advance(by: 30)
            }
            #expect(delivered == 3)
            let ids = backend.received.withLock { $0 }
            #expect(ids.count == 3 && Set(ids).count == 3)
            let attempts = try await database.withSession { db in
                try await db.raw("SELECT COUNT(*) AS n FROM webhook_attempts").first()!.decode(
                    column: "n", as: Int64.self)
            }
            #expect(attempts == 7)  // 4 failures + 3 deliveries
            let types = try await database.withSession { db in
                try await db.raw("SELECT event_type FROM webhook_outbox ORDER BY id").all().map {
                    try $0.decode(column: "event_type", as: String.self)
                }
            }
            #expect(types == ["order.created", "order.paid", "order.fulfilled"])
        }
    }

    @Test("two dispatchers on one ledger deliver each event once", arguments: TestEngine.available)
    func concurrentDispatchers(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let clock = try await Self.clock(afterCreating: 40, in: ledger)
            let backend = Backend(failures: 0, clock: clock)
            let dispatchers = (0..<2).map { _ in
                WebhookDispatcher(
                    ledger: ledger, url: "https://merchant.example/hooks", secret: Self.secret,
                    transport: backend.transport, clock: clock,
                    logger: TestLog.logger)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for dispatcher in dispatchers { group.addTask { _ = try await dispatcher.deliverDue(batchSize: 3) } }
                try await group.waitForAll()
            }
            let ids = backend.received.withLock { $0 }
            #expect(ids.count == 40 && Set(ids).count == 40)
        }
    }

    @Test(
        "while a slow merchant holds a whole batch, no event of it can be claimed by another dispatcher",
        arguments: TestEngine.available)
    func leaseCoversBatch(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let clock = try await Self.clock(afterCreating: 8, in: ledger)
            let stolen = Mutex(0)
            // Each delivery takes just under the 60-second timeout (a timeout this long also holds on a machine the
            // whole suite loads, where the claim below has taken seconds); meanwhile another replica looks for work.
            let slow = InProcessTransport { _, _, _, _ in
                clock.advance(by: 59.5)
                let claimed = (try? await ledger.claimWebhooks(limit: 100, lease: 60, now: clock.now()).count) ?? 0
                stolen.withLock { $0 += claimed }
                return ProviderHTTPResponse(status: 204, headers: [:], body: [])
            }
            let dispatcher = WebhookDispatcher(
                ledger: ledger, url: "https://merchant.example/hooks", secret: Self.secret, transport: slow,
                clock: clock,
                logger: TestLog.logger, timeout: .seconds(60))
            #expect(try await dispatcher.deliverDue(batchSize: 8).delivered == 8)
            #expect(stolen.withLock { $0 } == 0)
        }
    }

    /// A clock at the fixtures' instant, after `count` orders were created in `ledger` (an `order.created` event each).
    static func clock(afterCreating count: Int, in ledger: SQLLedger) async throws -> ManualClock {
        let clock = ManualClock(EngineFixtures.now)
        let version = try await ledger.saveCatalog(EngineFixtures.catalog, at: clock.now())
        for _ in 0..<count { _ = try await EngineFixtures.order(ledger, version: version) }
        return clock
    }

    /// The attempts logged so far.
    static func attempts(_ database: LedgerDatabase) async throws -> Int64 {
        try await database.withSession { db in
            try await db.raw("SELECT COUNT(*) AS n FROM webhook_attempts").first()!.decode(column: "n", as: Int64.self)
        }
    }

    @Test(
        "an endpoint that is down costs a pass one batch, not the whole backlog; back up, the backlog goes in one pass",
        arguments: TestEngine.available)
    func endpointDown(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let clock = try await Self.clock(afterCreating: 40, in: ledger)
            let backend = Backend(failures: 32, clock: clock)
            let dispatcher = WebhookDispatcher(
                ledger: ledger, url: "https://merchant.example/hooks", secret: Self.secret,
                transport: backend.transport, clock: clock, logger: TestLog.logger)
            #expect(try await dispatcher.deliverDue(batchSize: 16) == (0, 16))
            #expect(try await dispatcher.deliverDue(batchSize: 16) == (0, 16))
            #expect(try await Self.attempts(database) == 32)
            clock.advance(by: 60)
            #expect(try await dispatcher.deliverDue(batchSize: 16) == (40, 0))
            #expect(Set(backend.received.withLock { $0 }).count == 40)
        }
    }

    @Test("cancelled (a shutdown), a pass stops before its next event", arguments: TestEngine.available)
    func cancelledPass(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let clock = try await Self.clock(afterCreating: 5, in: ledger)
            // The merchant answers the first event; meanwhile the server is told to stop (the pass's task cancelled).
            let pass = Mutex<Task<(delivered: Int, failed: Int), any Error>?>(nil)
            let cancelling = InProcessTransport { _, _, _, _ in
                pass.withLock { $0?.cancel() }
                return ProviderHTTPResponse(status: 204, headers: [:], body: [])
            }
            let dispatcher = WebhookDispatcher(
                ledger: ledger, url: "https://merchant.example/hooks", secret: Self.secret, transport: cancelling,
                clock: clock, logger: TestLog.logger)
            let (start, go) = AsyncStream<Void>.makeStream()
            let task = Task {
                for await _ in start { break }
                return try await dispatcher.deliverDue(batchSize: 16)
            }
            pass.withLock { $0 = task }
            go.yield()
            let outcome = await task.result
            #expect(throws: CancellationError.self) { try outcome.get() }
            #expect(try await Self.attempts(database) == 1)
        }
    }

    @Test("signatures: a changed body, another secret or an old timestamp are refused")
    func signatures() {
        let body = Array(#"{"id":"evt_1"}"#.utf8)
        let now = EngineFixtures.now
        let header = WebhookSignature.header(
            secret: Self.secret, body: body, timestamp: Int64(now.timeIntervalSince1970))
        #expect(WebhookSignature.verify(header: header, body: body, secret: Self.secret, now: now))
        #expect(!WebhookSignature.verify(header: header, body: body + [0x20], secret: Self.secret, now: now))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: Self.secret + "x", now: now))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: Self.secret, now: now + 301))
        #expect(!WebhookSignature.verify(header: "garbage", body: body, secret: Self.secret, now: now))
    }
}
