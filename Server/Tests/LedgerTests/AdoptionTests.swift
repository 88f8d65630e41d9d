import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Synchronization
import Testing

/// An order adopted for a payment that came without one is created with the payment, in its final state, or not at
/// all: the caller then creates and pays it apart.
@Suite("Ledger: an adopted order is created with its payment")
struct AdoptionTests {
    static let later = Fixtures.now.addingTimeInterval(2)

    static func adoption(_ version: CatalogVersion, user: String = "user-a", txn: String = "t1") -> NewOrder {
        var new = Fixtures.newOrder(version, user: user, key: "appstore:\(txn)", hash: "adopted")
        new.origin = .adopted
        return new
    }

    static func payment(_ identity: OrderIdentity, txn: String = "t1", sandbox: Bool = false) -> VerifiedPayment {
        VerifiedPayment(
            channel: .appStore, providerTransactionID: txn, orderNo: identity.orderNo,
            amount: Money(amountMinor: 600, currency: .cny),
            cause: .app, evidence: "inbox:1", sandbox: sandbox)
    }

    @Test(
        "adopted with its payment: fulfilled, its whole history recorded, granted once", arguments: TestEngine.available
    )
    func adopted(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let identity = Fixtures.randomIdentity()
            let outcome = try await ledger.fulfil(
                Self.payment(identity, sandbox: true), adopting: Self.adoption(version), as: identity, at: Self.later)
            guard case .fulfilled(let fulfilled)? = outcome else {
                Issue.record("\(String(describing: outcome))")
                return
            }
            #expect(fulfilled.orderNo == identity.orderNo && fulfilled.status == .fulfilled && fulfilled.sandbox)
            #expect(fulfilled.createdAt == Fixtures.now && fulfilled.updatedAt == Self.later)
            #expect(try await ledger.order(number: identity.orderNo) == fulfilled)
            let events = try await ledger.events(orderNo: identity.orderNo)
            #expect(events.map(\.kind.rawValue) == ["created", "paid", "fulfilled"])
            #expect(events.map(\.cause) == [.system, .app, .app])
            #expect(
                try await ledger.holdings(userID: "user-a", at: Self.later).balances == [
                    Balance(name: "coins", amount: 60)
                ])
            #expect(
                try await ledger.payment(channel: .appStore, providerTransactionID: "t1")?.orderNo == identity.orderNo)
            #expect(try await OrderLedgerTests.count(database, "webhook_outbox") == 3)
        }
    }

    @Test("the payment recorded before: nothing adopted, nothing changed", arguments: TestEngine.available)
    func recordedBefore(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let first = Fixtures.randomIdentity()
            #expect(
                try await ledger.fulfil(
                    Self.payment(first), adopting: Self.adoption(version, user: "user-b"), as: first, at: Self.later)
                    != nil)
            let identity = Fixtures.randomIdentity()
            #expect(
                try await ledger.fulfil(
                    Self.payment(identity), adopting: Self.adoption(version), as: identity, at: Self.later) == nil)
            #expect(try await ledger.order(number: identity.orderNo) == nil)
            #expect(try await OrderLedgerTests.count(database, "orders") == 1)
            #expect(try await OrderLedgerTests.count(database, "order_events") == 3)
            #expect(try await ledger.holdings(userID: "user-a", at: Self.later).balances.isEmpty)
        }
    }

    @Test("the user's adoption key taken: nothing adopted, nothing changed", arguments: TestEngine.available)
    func keyTaken(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let earlier = try await ledger.createOrder(Self.adoption(version), identity: Fixtures.randomIdentity).order
            let identity = Fixtures.randomIdentity()
            #expect(
                try await ledger.fulfil(
                    Self.payment(identity), adopting: Self.adoption(version), as: identity, at: Self.later) == nil)
            #expect(try await OrderLedgerTests.count(database, "orders") == 1)
            #expect(try await OrderLedgerTests.count(database, "payment_transactions") == 0)
            #expect(try await ledger.order(number: earlier.orderNo)?.status == .created)
        }
    }

    @Test("a refund that waited for the payment takes it back in the same step", arguments: TestEngine.available)
    func refundWaited(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let reversal = Reversal(
                channel: .appStore, providerTransactionID: "t1", kind: .refunded, cause: .notification,
                evidence: "inbox:7")
            #expect(try await ledger.reverse(reversal, at: Fixtures.now) == .unknownPayment)
            let identity = Fixtures.randomIdentity()
            let outcome = try await ledger.fulfil(
                Self.payment(identity), adopting: Self.adoption(version), as: identity, at: Self.later)
            guard case .fulfilled(let order)? = outcome else {
                Issue.record("\(String(describing: outcome))")
                return
            }
            #expect(order.status == .refunded)
            #expect(
                try await ledger.events(orderNo: identity.orderNo).map(\.kind.rawValue) == [
                    "created", "paid", "fulfilled", "refunded",
                ])
            #expect(
                try await ledger.holdings(userID: "user-a", at: Self.later).balances == [
                    Balance(name: "coins", amount: 0)
                ])
        }
    }

    /// On PostgreSQL a submission's lookup reserves the ids of the order and payment it may record, which then go
    /// with the rest of the write in its last statement, without `ON CONFLICT` (``ReservedPayment``): another
    /// replica's record of the same transaction in between must fail that statement, and the write run again find it,
    /// whether it adopts an order or pays one the user created before.
    @Test(
        "PostgreSQL: a payment another replica records after the lookup reserved its ids: the write runs again, finds it, and grants nothing",
        .enabled(if: TestEngine.postgresURL != nil, "needs PostgreSQL"), arguments: [true, false])
    func recordedAfterTheLookup(adopting: Bool) async throws {
        try await TestEngine.postgres.withTwoPools { ledger, replica in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let created = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            let runs = Mutex(0)
            let query = PaymentQuery(
                channel: .appStore, providerTransactionID: "t1", chainOf: nil,
                order: adopting ? nil : .uuid(created.orderUUID))
            let outcome = try await ledger.atomically { write -> FulfilmentOutcome? in
                let run = runs.withLock { runs in
                    runs += 1
                    return runs
                }
                let (_, lookup) = try await write.storeInbound(
                    InboxTests.signal("submission of t1", kind: .submission), appliedAt: Fixtures.now,
                    lookingUp: query)
                #expect((lookup.payment == nil) == (run == 1))
                if run == 1 {
                    let other = Fixtures.randomIdentity()
                    #expect(
                        try await replica.fulfil(
                            Self.payment(other), adopting: Self.adoption(version, user: "user-b"), as: other,
                            at: Self.later) != nil)
                }
                guard adopting else {
                    return .some(
                        try await write.fulfil(
                            Self.payment(OrderIdentity(orderNo: created.orderNo, orderUUID: created.orderUUID)),
                            at: Self.later))
                }
                let identity = Fixtures.randomIdentity()
                return try await write.fulfil(
                    Self.payment(identity), adopting: Self.adoption(version), as: identity, at: Self.later)
            }
            #expect(runs.withLock { $0 } == 2)
            if adopting {
                #expect(outcome == nil, "recorded before: the caller answers with the recorded payment")
            } else {
                guard case .conflict(let order, let recordedFor)? = outcome else {
                    Issue.record("\(String(describing: outcome))")
                    return
                }
                #expect(order.status != .fulfilled && recordedFor != created.orderNo, "\(order.status)")
                #expect(try await ledger.order(number: created.orderNo)?.status == order.status)
            }
            #expect(
                try await ledger.payment(channel: .appStore, providerTransactionID: "t1")?.userID == "user-b")
            #expect(try await ledger.holdings(userID: "user-a", at: Self.later).balances.isEmpty)
            #expect(
                try await replica.holdings(userID: "user-b", at: Self.later).balances == [
                    Balance(name: "coins", amount: 60)
                ])
        }
    }

    @Test(
        "20 concurrent adoptions of one payment by two users: one order, paid and granted once",
        arguments: TestEngine.available)
    func concurrent(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let adopted = try await withThrowingTaskGroup(of: FulfilmentOutcome?.self) { group in
                for attempt in 0..<20 {
                    group.addTask {
                        let identity = Fixtures.randomIdentity()
                        return try await ledger.fulfil(
                            Self.payment(identity),
                            adopting: Self.adoption(version, user: attempt % 2 == 0 ? "user-a" : "user-b"),
                            as: identity,
                            at: Self.later)
                    }
                }
                return try await group.reduce(into: 0) { count, outcome in count += outcome == nil ? 0 : 1 }
            }
            #expect(adopted == 1)
            #expect(try await OrderLedgerTests.count(database, "orders") == 1)
            #expect(try await OrderLedgerTests.count(database, "payment_transactions") == 1)
            #expect(try await OrderLedgerTests.count(database, "grants") == 1)
            #expect(try await OrderLedgerTests.count(database, "order_events") == 3)
        }
    }
}
