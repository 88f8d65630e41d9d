import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

/// An order created and paid in one write, or named by a payment's lookup and paid in the same write, is not read again
/// by its payment: what the write inserted or read is passed on, unless the write changed it in between; on
/// PostgreSQL the lookup's read locks it, so no other replica changes it in between either.
@Suite("Ledger: an order a write created or looked up is passed on to its payment")
struct HeldOrdersTests {
    /// How the write comes to hold the order it pays.
    enum Holding: String, CaseIterable, Sendable {
        /// It creates the order.
        case created
        /// The order was created before, and the write's payment lookup names it by its UUID.
        case lookedUp
        /// The same, named by its number (a legacy StoreKit 1 `applicationUsername`).
        case lookedUpByNumber
    }

    @Test(
        "held and paid in one write: fulfilled, as the stored row says", arguments: TestEngine.available,
        Holding.allCases)
    func heldThenPaid(engine: TestEngine, holding: Holding) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let outcome = try await Self.holding(holding, version, ledger) { order, ledger in
                try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            }
            guard case .fulfilled(let fulfilled) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(try await ledger.order(number: fulfilled.orderNo) == fulfilled)
            #expect(try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances.first?.amount == 60)
            let unknown = try await ledger.payment(
                PaymentQuery(channel: .appStore, providerTransactionID: "t2", chainOf: nil, order: .uuid(UUID())))
            #expect(unknown.namedOrder == nil && unknown.payment == nil)
        }
    }

    @Test(
        "held, then cancelled, then paid in one write: the payment sees the cancelled order and is flagged",
        arguments: TestEngine.available, Holding.allCases)
    func changedBeforePaid(engine: TestEngine, holding: Holding) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let outcome = try await Self.holding(holding, version, ledger) { order, ledger in
                _ = try await ledger.transition(
                    orderNo: order.orderNo, from: [.created], to: .cancelled, cause: .app, evidence: nil,
                    at: Fixtures.now)
                return try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            }
            guard case .flagged(let flagged, .orderAlreadySettled) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(try await ledger.order(number: flagged.orderNo) == flagged)
            #expect(
                try await ledger.events(orderNo: flagged.orderNo).map(\.kind.rawValue) == [
                    "created", "cancelled", "flagged:order_already_settled",
                ])
        }
    }

    /// Runs `then` in one write with an order that write holds as `holding` says: created in it, or created before
    /// and named by the write's payment lookup, by UUID or by number (which must answer it as stored).
    private static func holding<R: Sendable>(
        _ holding: Holding, _ version: CatalogVersion, _ ledger: SQLLedger,
        then: @escaping @Sendable (Order, any LedgerWrite) async throws -> R
    ) async throws -> R {
        let existing =
            holding != .created
            ? try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity).order : nil
        return try await ledger.atomically { ledger in
            guard let existing else {
                let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                    .order
                return try await then(order, ledger)
            }
            let name: PaymentQuery.OrderName =
                holding == .lookedUp ? .uuid(existing.orderUUID) : .number(existing.orderNo)
            let named = try await ledger.payment(
                PaymentQuery(channel: .appStore, providerTransactionID: "t1", chainOf: nil, order: name)
            ).namedOrder
            #expect(named == existing)
            return try await then(existing, ledger)
        }
    }

    /// Without the lock, the other replica's cancellation would commit in between, and the payment would pay the
    /// order as the lookup read it (created), over the cancellation.
    @Test(
        "PostgreSQL: the order a lookup in a write named is locked until it commits: another replica's cancellation waits and then finds it paid",
        .enabled(if: TestEngine.postgresURL != nil, "needs PostgreSQL"), arguments: [false, true])
    func lookupLocksTheNamedOrder(withInboxEntry: Bool) async throws {
        try await TestEngine.postgres.withTwoPools { paying, cancelling in
            let version = try await paying.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await paying.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            let (looked, lookedUp) = AsyncStream<Void>.makeStream()
            let (gate, opening) = AsyncStream<Void>.makeStream()
            async let paid = paying.atomically { ledger in
                if withInboxEntry {
                    _ = try await ledger.storeInbound(
                        InboxTests.signal("submission", kind: .submission), appliedAt: Fixtures.now,
                        lookingUp: Self.query("t1", naming: order))
                } else {
                    _ = try await ledger.payment(Self.query("t1", naming: order))
                }
                lookedUp.yield()
                var waiting = gate.makeAsyncIterator()
                _ = await waiting.next()
                return try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            }
            var lookup = looked.makeAsyncIterator()
            _ = await lookup.next()
            let cancellation = Task {
                try await cancelling.transition(
                    orderNo: order.orderNo, from: [.created], to: .cancelled, cause: .app, evidence: nil,
                    at: Fixtures.now)
            }
            try await Task.sleep(for: .milliseconds(300))
            opening.yield()
            guard case .fulfilled(let fulfilled) = try await paid else {
                Issue.record("the payment was not fulfilled")
                return
            }
            #expect(try await cancellation.value == fulfilled, "the cancellation found the order paid")
            #expect(try await cancelling.order(number: order.orderNo) == fulfilled)
            let events = try await cancelling.events(orderNo: order.orderNo)
            #expect(!events.contains { $0.toStatus == .cancelled }, "\(events.map(\.kind.rawValue))")
        }
    }

    private static func query(_ transaction: String, naming order: Order) -> PaymentQuery {
        PaymentQuery(
            channel: .appStore, providerTransactionID: transaction, chainOf: nil, order: .uuid(order.orderUUID))
    }
}
