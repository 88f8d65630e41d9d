import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

/// Invariant 2: one provider transaction id arriving for another order than the one it was recorded for is a conflict
/// to flag with both orders named, never a quiet success that leaves a paid order unpaid.
@Suite("Ledger: a payment id seen on two orders")
struct PaymentConflictTests {
    /// Alice's and Bob's Alipay orders, and Alice's paid with `txn`.
    private static func twoOrders(_ ledger: SQLLedger, txn: String) async throws -> (alice: Order, bob: Order) {
        let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
        let alice = try await ledger.createOrder(
            Fixtures.newOrder(version, user: "user-a", product: "box", channel: .alipay),
            identity: Fixtures.randomIdentity
        ).order
        let bob = try await ledger.createOrder(
            Fixtures.newOrder(version, user: "user-b", product: "box", channel: .alipay),
            identity: Fixtures.randomIdentity
        ).order
        guard case .fulfilled = try await ledger.fulfil(Fixtures.payment(alice, txn: txn), at: Fixtures.now) else {
            throw TestFailure("alice's order was not fulfilled")
        }
        return (alice, bob)
    }

    @Test(
        "an id recorded for one order and reported for another flags the other with both orders, credits nothing",
        arguments: TestEngine.available)
    func flagsTheClaimingOrder(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let (alice, bob) = try await Self.twoOrders(ledger, txn: "2026112622001000000000000001")
            var claim = Fixtures.payment(bob, txn: "2026112622001000000000000001")
            claim.evidence = "inbox:7"
            let outcome = try await ledger.fulfil(claim, at: Fixtures.now)
            guard case .conflict(let flagged, let recordedFor) = outcome else {
                Issue.record("expected a conflict, got \(outcome)")
                return
            }
            #expect(recordedFor == alice.orderNo)
            #expect(flagged.orderNo == bob.orderNo)
            #expect(flagged.status == .flagged)
            #expect(try await ledger.order(number: bob.orderNo)?.status == .flagged)
            let events = try await ledger.events(orderNo: bob.orderNo)
            #expect(events.map(\.kind.rawValue) == ["created", "flagged:payment_id_conflict"])
            #expect(events.last?.cause == .notification)
            #expect(events.last?.evidence?.contains("alipay:2026112622001000000000000001 inbox:7") == true)
            #expect(events.last?.evidence?.contains(alice.orderNo) == true)
            // Nothing credited to Bob, nothing more recorded; Alice keeps what she paid for.
            #expect(try await ledger.holdings(userID: "user-b", at: Fixtures.now).balances.isEmpty)
            #expect(
                try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances == [
                    Balance(name: "boxes", amount: 1)
                ])
            #expect(try await OrderLedgerTests.count(database, "payment_transactions") == 1)
            #expect(try await ledger.order(number: alice.orderNo)?.status == .fulfilled)
            // Both orders' dossiers show the claim, with the signal; Bob's flag waits for an operator; a webhook went out.
            let bobs = try #require(try await ledger.dossier(orderNo: bob.orderNo))
            let conflict = try #require(bobs.conflicts.first)
            #expect(bobs.conflicts.count == 1)
            #expect(conflict.channel == .alipay && conflict.providerTransactionID == "2026112622001000000000000001")
            #expect(conflict.claimingOrderNo == bob.orderNo && conflict.recordedOrderNo == alice.orderNo)
            #expect(conflict.amount == bob.amount && conflict.cause == .notification && conflict.evidence == "inbox:7")
            #expect(conflict.createdAt == Fixtures.now)
            #expect(bobs.flagWaiting)
            #expect(bobs.signals.isEmpty, "no inbox:7 was stored in this test: nothing to show, nothing invented")
            #expect(bobs.webhooks.map(\.type).last == .order(.flagged))
            #expect(try await ledger.dossier(orderNo: alice.orderNo)?.conflicts == [conflict])
        }
    }

    @Test(
        "the same conflict again changes nothing; the same id for its own order stays an idempotent success",
        arguments: TestEngine.available)
    func repeatsChangeNothing(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let (alice, bob) = try await Self.twoOrders(ledger, txn: "T-1")
            for _ in 0..<3 {
                let again = try await ledger.fulfil(Fixtures.payment(bob, txn: "T-1"), at: Fixtures.now)
                guard case .conflict(let order, alice.orderNo) = again else {
                    Issue.record("expected a conflict, got \(again)")
                    return
                }
                #expect(order.status == .flagged)
            }
            #expect(
                try await ledger.fulfil(Fixtures.payment(alice, txn: "T-1"), at: Fixtures.now)
                    == .duplicate(orderNo: alice.orderNo))
            #expect(
                try await ledger.events(orderNo: bob.orderNo).map(\.kind.rawValue) == [
                    "created", "flagged:payment_id_conflict",
                ])
            #expect(try await OrderLedgerTests.count(database, "payment_conflicts") == 1)
            #expect(try await ledger.dossier(orderNo: bob.orderNo)?.webhooks.count == 2)
        }
    }

    @Test(
        "20 concurrent deliveries of one conflicting id flag the claiming order once", arguments: TestEngine.available)
    func concurrentConflicts(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let (alice, bob) = try await Self.twoOrders(ledger, txn: "T-2")
            let outcomes = try await withThrowingTaskGroup(of: FulfilmentOutcome.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await ledger.fulfil(Fixtures.payment(bob, txn: "T-2"), at: Fixtures.now) }
                }
                return try await group.reduce(into: [FulfilmentOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { if case .conflict(_, alice.orderNo) = $0 { true } else { false } })
            #expect(
                try await ledger.events(orderNo: bob.orderNo).map(\.kind.rawValue) == [
                    "created", "flagged:payment_id_conflict",
                ])
            #expect(try await OrderLedgerTests.count(database, "payment_conflicts") == 1)
            #expect(try await OrderLedgerTests.count(database, "payment_transactions") == 1)
        }
    }

    @Test("the kept claim is append-only", arguments: TestEngine.available)
    func appendOnly(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let (_, bob) = try await Self.twoOrders(ledger, txn: "T-3")
            _ = try await ledger.fulfil(Fixtures.payment(bob, txn: "T-3"), at: Fixtures.now)
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in
                    try await db.raw("UPDATE payment_conflicts SET evidence = 'x'").run()
                }
            }
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in try await db.raw("DELETE FROM payment_conflicts").run() }
            }
        }
    }
}

private struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
