import Foundation
import LedgerTestSupport
import OrderSafeModel
import SQLKit
import Testing

@testable import Ledger

/// A write's order events and webhook rows are inserted when its body is done: they must commit with it, in the order
/// the write made them, and never outlive a write that failed. Its grants are held until its next statement: that
/// statement, whatever it is, must see them, and their failure must fail the write.
@Suite("Ledger: statements held until their write's next statement or its end")
struct DeferredInsertsTests {
    struct Abandoned: Error {}

    /// An order of `double` (``double()``'s product) for `user-double`.
    static func doubleOrder(_ version: CatalogVersion) -> NewOrder {
        NewOrder(
            userID: "user-double", productID: "double", channel: .appStore,
            amount: Money(amountMinor: 600, currency: .cny), catalogVersionID: version.id, idempotency: nil,
            createdAt: Fixtures.now)
    }

    /// A catalog whose one product grants one balance twice.
    static func double() throws -> Catalog {
        try Catalog(
            version: "double-1",
            products: [
                CatalogProduct(
                    id: "double", kind: .consumable, title: "Coins and a bonus", appStoreProductID: "test.double",
                    channels: [.appStore],
                    prices: [.appStore: Money(amountMinor: 600, currency: .cny)],
                    grants: [.addBalance(balance: "coins", amount: 60), .addBalance(balance: "coins", amount: 5)])
            ])
    }

    @Test(
        "an order created, paid and fulfilled in one write has its events and webhooks in order; a failed write leaves none",
        arguments: TestEngine.available)
    func inOrderOrNotAtAll(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let identity = OrderIdentity(orderNo: "T-ABANDONED", orderUUID: UUID())
            await #expect(throws: Abandoned.self) {
                try await ledger.atomically { ledger in
                    let order = try await ledger.createOrder(
                        Fixtures.newOrder(version, user: "user-x"), identity: { identity }
                    ).order
                    _ = try await ledger.fulfil(Fixtures.payment(order, txn: "abandoned-1"), at: Fixtures.now)
                    throw Abandoned()
                }
            }
            #expect(try await ledger.order(number: "T-ABANDONED") == nil)
            #expect(try await ledger.claimWebhooks(limit: 100, lease: 60, now: Fixtures.now).isEmpty)

            let orders = try await ledger.atomically { ledger in
                var orders: [Order] = []
                for n in 0..<3 {
                    let order = try await ledger.createOrder(
                        Fixtures.newOrder(version, user: "user-\(n)"), identity: Fixtures.randomIdentity
                    ).order
                    _ = try await ledger.fulfil(Fixtures.payment(order, txn: "txn-\(n)"), at: Fixtures.now)
                    orders.append(order)
                }
                return orders
            }
            for order in orders {
                #expect(
                    try await ledger.events(orderNo: order.orderNo).map(\.kind.rawValue) == [
                        "created", "paid", "fulfilled",
                    ])
            }
            let webhooks = try await ledger.claimWebhooks(limit: 100, lease: 60, now: Fixtures.now)
            let expected = orders.flatMap { order in
                ["order.created", "order.paid", "order.fulfilled"].map { (order.orderNo, $0) }
            }
            #expect(webhooks.map { Self.orderNo(in: $0.payload) } == expected.map(\.0))
            #expect(webhooks.map(\.type.rawValue) == expected.map(\.1))
        }
    }

    @Test(
        "a grant held by a write is seen by its next statement; two payments of one balance in one write both count",
        arguments: TestEngine.available)
    func heldGrantsSeenByTheNextStatement(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let seen = try await ledger.atomically { ledger in
                var seen: [Int64] = []
                for n in 0..<2 {
                    let order = try await ledger.createOrder(
                        Fixtures.newOrder(version, user: "user-held"), identity: Fixtures.randomIdentity
                    ).order
                    _ = try await ledger.fulfil(Fixtures.payment(order, txn: "held-\(n)"), at: Fixtures.now)
                    seen.append(
                        try await ledger.holdings(userID: "user-held", at: Fixtures.now).balances.first?.amount ?? 0)
                }
                return seen
            }
            #expect(seen == [60, 120])
            #expect(try await ledger.holdings(userID: "user-held", at: Fixtures.now).balances.map(\.amount) == [120])
        }
    }

    @Test(
        "a product granting one balance twice credits both: held grants of one row never run as one statement",
        arguments: TestEngine.available)
    func twoGrantsOfOneRow(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(try Self.double(), at: Fixtures.now)
            for n in 0..<2 {
                let order = try await ledger.createOrder(Self.doubleOrder(version), identity: Fixtures.randomIdentity)
                    .order
                _ = try await ledger.fulfil(Fixtures.payment(order, txn: "double-\(n)"), at: Fixtures.now)
            }
            #expect(try await ledger.holdings(userID: "user-double", at: Fixtures.now).balances.map(\.amount) == [130])
        }
    }

    /// On PostgreSQL an adopted order and its payment are held (their ids reserved by the lookup) and the first grant
    /// joins them; the second grant of the same balance must still wait for a statement of its own.
    @Test(
        "an order adopted after its submission's lookup, for a product granting one balance twice, credits both",
        arguments: TestEngine.available)
    func adoptedWithTwoGrantsOfOneRow(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(try Self.double(), at: Fixtures.now)
            let identity = Fixtures.randomIdentity()
            let outcome = try await ledger.atomically { ledger in
                _ = try await ledger.storeInbound(
                    InboxTests.signal("submission of double-1", kind: .submission), appliedAt: Fixtures.now,
                    lookingUp: PaymentQuery(
                        channel: .appStore, providerTransactionID: "double-1", chainOf: nil, order: nil))
                var new = Self.doubleOrder(version)
                new.origin = .adopted
                return try await ledger.fulfil(
                    VerifiedPayment(
                        channel: .appStore, providerTransactionID: "double-1", orderNo: identity.orderNo,
                        amount: Money(amountMinor: 600, currency: .cny), cause: .app, evidence: "inbox:1",
                        sandbox: false),
                    adopting: new, as: identity, at: Fixtures.now)
            }
            guard case .fulfilled? = outcome else {
                Issue.record("\(String(describing: outcome))")
                return
            }
            #expect(try await ledger.holdings(userID: "user-double", at: Fixtures.now).balances.map(\.amount) == [65])
            #expect(
                try await ledger.events(orderNo: identity.orderNo).map(\.kind.rawValue) == [
                    "created", "paid", "fulfilled",
                ])
        }
    }

    @Test(
        "a held change that fails fails its write, even when the statement it ran before is caught",
        arguments: TestEngine.available)
    func failedHeldChangeFailsTheWrite(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            await #expect(throws: (any Error).self) {
                try await ledger.atomically { ledger in
                    let order = try await ledger.createOrder(
                        Fixtures.newOrder(version, user: "user-failed"),
                        identity: { OrderIdentity(orderNo: "T-HELD-FAIL", orderUUID: UUID()) }
                    ).order
                    let db = try #require((ledger as? SQLLedger)?.write)
                    try await LedgerDatabase.change(["INSERT INTO no_such_table (x) VALUES (1)"], on: db)
                    _ = try? await ledger.order(number: order.orderNo)
                }
            }
            #expect(try await ledger.order(number: "T-HELD-FAIL") == nil)
            // Held until the end of the write, it fails it there too.
            await #expect(throws: (any Error).self) {
                try await ledger.atomically { ledger in
                    let db = try #require((ledger as? SQLLedger)?.write)
                    try await LedgerDatabase.change(["INSERT INTO no_such_table (x) VALUES (1)"], on: db)
                }
            }
        }
    }

    static func orderNo(in payload: String) -> String? {
        struct Event: Decodable {
            struct Data: Decodable { var order: Order }
            var data: Data
        }
        return try? OrderSafeJSON.decoder().decode(Event.self, from: Foundation.Data(payload.utf8)).data.order.orderNo
    }
}
