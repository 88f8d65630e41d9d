import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

/// An order created and paid in one write is not read back by its payment: what the write inserted is passed on,
/// unless the write changed it in between.
@Suite("Ledger: an order created in a write is passed on to its payment")
struct CreatedOrdersTests {
    @Test("created and paid in one write: fulfilled, as the stored row says", arguments: TestEngine.available)
    func createdThenPaid(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let outcome = try await ledger.atomically { ledger in
                let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                    .order
                return try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            }
            guard case .fulfilled(let fulfilled) = outcome else {
                Issue.record("\(outcome)")
                return
            }
            #expect(try await ledger.order(number: fulfilled.orderNo) == fulfilled)
            #expect(try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances.first?.amount == 60)
        }
    }

    @Test(
        "created, then cancelled, then paid in one write: the payment sees the cancelled order and is flagged",
        arguments: TestEngine.available)
    func changedBeforePaid(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let outcome = try await ledger.atomically { ledger in
                let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                    .order
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
}
