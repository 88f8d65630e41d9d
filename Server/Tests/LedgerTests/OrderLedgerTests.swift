import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import SQLKit
import Testing

@Suite("Ledger orders and idempotency")
struct OrderLedgerTests {
    @Test("an order reads back by number and by UUID", arguments: TestEngine.available)
    func createAndRead(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let created = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
            guard case .created(let order) = created else {
                Issue.record("expected a new order")
                return
            }
            #expect(order.status == .created)
            #expect(order.amount == Money(amountMinor: 600, currency: .cny))
            #expect(order.userID == "user-a")
            #expect(try await ledger.order(number: order.orderNo) == order)
            #expect(try await ledger.order(uuid: order.orderUUID) == order)
            #expect(try await ledger.order(number: "nope") == nil)
            let events = try await ledger.events(orderNo: order.orderNo)
            #expect(events.map(\.kind.rawValue) == ["created"])
            #expect(events.first?.cause == .app)
        }
    }

    @Test(
        "the same idempotency key and request give the same order; another request is a conflict",
        arguments: TestEngine.available)
    func idempotencyKey(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let first = try await ledger.createOrder(
                Fixtures.newOrder(version, key: "k1"), identity: Fixtures.randomIdentity)
            let again = try await ledger.createOrder(
                Fixtures.newOrder(version, key: "k1"), identity: Fixtures.randomIdentity)
            #expect(again == .replayed(first.order))
            await #expect(throws: LedgerError.idempotencyConflict(key: "k1")) {
                try await ledger.createOrder(
                    Fixtures.newOrder(version, key: "k1", hash: "h2"), identity: Fixtures.randomIdentity)
            }
            // Keys are per user: another user's identical key is a different order.
            let other = try await ledger.createOrder(
                Fixtures.newOrder(version, user: "user-b", key: "k1"), identity: Fixtures.randomIdentity)
            guard case .created(let otherOrder) = other else {
                Issue.record("expected a new order")
                return
            }
            #expect(otherOrder.orderNo != first.order.orderNo)
        }
    }

    @Test("50 concurrent requests with one idempotency key create exactly one order", arguments: TestEngine.available)
    func concurrentIdempotency(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let orderNos = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await ledger.createOrder(
                            Fixtures.newOrder(version, key: "same"), identity: Fixtures.randomIdentity
                        )
                        .order.orderNo
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(orderNos.count == 1)
            #expect(try await Self.count(database, "orders") == 1)
        }
    }

    @Test("300 concurrent orders are 300 distinct orders", arguments: TestEngine.available)
    func concurrentInserts(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let orders = try await withThrowingTaskGroup(of: Order.self) { group in
                for index in 0..<300 {
                    group.addTask {
                        try await ledger.createOrder(
                            Fixtures.newOrder(version, user: "user-\(index % 7)"), identity: Fixtures.randomIdentity
                        ).order
                    }
                }
                return try await group.reduce(into: [Order]()) { $0.append($1) }
            }
            #expect(Set(orders.map(\.orderNo)).count == 300)
            #expect(Set(orders.map(\.orderUUID)).count == 300)
            #expect(try await Self.count(database, "orders") == 300)
        }
    }

    @Test("a colliding order number is retried with a fresh one", arguments: TestEngine.available)
    func numberCollision(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let fixed = OrderIdentity(orderNo: "OS-FIXED", orderUUID: UUID())
            _ = try await ledger.createOrder(Fixtures.newOrder(version), identity: { fixed })
            let calls = Counter()
            let second = try await ledger.createOrder(
                Fixtures.newOrder(version),
                identity: {
                    calls.increment() == 0 ? fixed : Fixtures.randomIdentity()
                })
            #expect(second.order.orderNo != "OS-FIXED")
            #expect(calls.value == 2)
            await #expect(throws: LedgerError.orderNumberExhausted) {
                try await ledger.createOrder(Fixtures.newOrder(version), identity: { fixed })
            }
        }
    }

    @Test(
        "storing the same catalog twice keeps one version; a changed one adds a version",
        arguments: TestEngine.available)
    func catalogVersions(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let first = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let again = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now.addingTimeInterval(60))
            #expect(first == again)
            var changed = Fixtures.catalog
            changed.version = "test-2"
            let second = try await ledger.saveCatalog(changed, at: Fixtures.now)
            #expect(second.id != first.id)
        }
    }

    @Test(
        "an order for a product missing from its catalog version is refused by a constraint",
        arguments: TestEngine.available)
    func productConstraint(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            var order = Fixtures.newOrder(version)
            order.productID = "not_in_catalog"
            await #expect(throws: (any Error).self) {
                try await ledger.createOrder(order, identity: Fixtures.randomIdentity)
            }
        }
    }

    @Test("inbound signals are stored once per distinct body", arguments: TestEngine.available)
    func inbox(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let signal = InboundSignal(
                channel: .alipay, kind: .notify, headers: ["content-type": "application/x-www-form-urlencoded"],
                body: Array("trade_no=1&sign=x".utf8), receivedAt: Fixtures.now)
            let first = try await ledger.storeInbound(signal)
            let replay = try await ledger.storeInbound(signal)
            var other = signal
            other.body = Array("trade_no=2&sign=y".utf8)
            let second = try await ledger.storeInbound(other)
            #expect(first.isNew && !replay.isNew && second.isNew)
            #expect(first.id == replay.id)
            #expect(second.id != first.id)
        }
    }

    static func count(_ database: LedgerDatabase, _ table: String) async throws -> Int {
        try await database.withSession { db in
            try await db.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first()!.decode(column: "n", as: Int.self)
        }
    }
}

/// A thread-safe call counter for identity closures.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// Returns the count before this call.
    func increment() -> Int {
        lock.withLock {
            defer { count += 1 }
            return count
        }
    }

    var value: Int { lock.withLock { count } }
}
