import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@Suite(
    "Provider-dated periods: a subscription runs until the provider's expiresDate, not one period from when we saw it")
struct ProviderPeriodTests {
    static let day: TimeInterval = 86400

    /// Records one payment of `vip_month` for user-a whose period the provider dates to end at `end`.
    static func record(_ ledger: SQLLedger, _ version: CatalogVersion, txn: String, end: Date) async throws
        -> Order
    {
        let order = try await ledger.createOrder(
            Fixtures.newOrder(version, product: "vip_month"), identity: Fixtures.randomIdentity
        ).order
        var payment = Fixtures.payment(order, txn: txn)
        payment.periodEnd = end
        guard case .fulfilled = try await ledger.fulfil(payment, at: Fixtures.now) else {
            Issue.record("expected \(txn) fulfilled")
            return order
        }
        return order
    }

    static func vip(_ ledger: SQLLedger, at date: Date = Fixtures.now) async throws -> Entitlement? {
        try await ledger.holdings(userID: "user-a", at: date).entitlements.first { $0.name == "vip" }
    }

    @Test(
        "an old period restored grants nothing now; periods recorded out of order end at the latest",
        arguments: TestEngine.available)
    func outOfOrder(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            _ = try await Self.record(ledger, version, txn: "old", end: Fixtures.now - 300 * Self.day)
            #expect(try await Self.vip(ledger)?.active == false)

            _ = try await Self.record(ledger, version, txn: "r2", end: Fixtures.now + 40 * Self.day)
            // arrives after its renewal
            _ = try await Self.record(ledger, version, txn: "r1", end: Fixtures.now + 10 * Self.day)
            #expect(try await Self.vip(ledger)?.expiresAt == Fixtures.now + 40 * Self.day)
        }
    }

    @Test(
        "refunding the latest period falls back to the one still standing, refunding all ends it now; reinstating restores it",
        arguments: TestEngine.available)
    func refundsAndReinstatement(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            _ = try await Self.record(ledger, version, txn: "p1", end: Fixtures.now + 10 * Self.day)
            _ = try await Self.record(ledger, version, txn: "p2", end: Fixtures.now + 40 * Self.day)
            let later = Fixtures.now + Self.day
            _ = try await ledger.reverse(ReversalTests.refund("p2"), at: later)
            #expect(try await Self.vip(ledger)?.expiresAt == Fixtures.now + 10 * Self.day)
            _ = try await ledger.reverse(ReversalTests.refund("p1"), at: later)
            #expect(try await Self.vip(ledger, at: later + 1)?.expiresAt == later)
            #expect(try await Self.vip(ledger, at: later + 1)?.active == false)

            #expect(
                try await ledger.reinstate(
                    channel: .appStore, providerTransactionID: "p2", cause: .notification, evidence: "inbox:5",
                    at: later) != nil)
            #expect(try await Self.vip(ledger, at: later)?.expiresAt == Fixtures.now + 40 * Self.day)
        }
    }

    @Test(
        "the provider extending a period moves the end once; an earlier date, a reversed or unknown payment change nothing",
        arguments: TestEngine.available)
    func extension_(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await Self.record(ledger, version, txn: "s1", end: Fixtures.now + 30 * Self.day)
            let extended = Fixtures.now + 37 * Self.day
            func extend(_ txn: String, _ end: Date) async throws -> String? {
                try await ledger.extendPeriod(
                    channel: .appStore, providerTransactionID: txn, until: end, cause: .notification,
                    evidence: "inbox:7", at: Fixtures.now)
            }
            #expect(try await extend("s1", extended) == order.orderNo)
            #expect(try await extend("s1", extended) == nil)
            #expect(try await extend("s1", Fixtures.now + 20 * Self.day) == nil)
            #expect(try await extend("nope", extended) == nil)
            #expect(try await Self.vip(ledger)?.expiresAt == extended)
            #expect(try await ledger.events(orderNo: order.orderNo).filter { $0.kind == .periodExtended }.count == 1)

            _ = try await ledger.reverse(ReversalTests.refund("s1"), at: Fixtures.now)
            #expect(try await extend("s1", extended + Self.day) == nil)
            #expect(try await Self.vip(ledger)?.expiresAt == Fixtures.now)
        }
    }

    @Test(
        "a catalog-dated payment still extends by its period from now or from the current end",
        arguments: TestEngine.available)
    func catalogDated(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(
                Fixtures.newOrder(version, product: "vip_month"), identity: Fixtures.randomIdentity
            ).order
            _ = try await ledger.fulfil(Fixtures.payment(order, txn: "c1"), at: Fixtures.now)
            #expect(
                try await Self.vip(ledger)?.expiresAt == GrantPeriod(count: 1, unit: .month).adding(to: Fixtures.now))
        }
    }
}
