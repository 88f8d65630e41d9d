import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

/// A write's order events and webhook rows are inserted when its body is done: they must commit with it, in the order
/// the write made them, and never outlive a write that failed.
@Suite("Ledger: history rows inserted at the end of their write")
struct DeferredInsertsTests {
    struct Abandoned: Error {}

    @Test("an order created, paid and fulfilled in one write has its events and webhooks in order; a failed write leaves none",
          arguments: TestEngine.available)
    func inOrderOrNotAtAll(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let identity = OrderIdentity(orderNo: "T-ABANDONED", orderUUID: UUID())
            await #expect(throws: Abandoned.self) {
                try await ledger.atomically {
                    let order = try await ledger.createOrder(Fixtures.newOrder(version, user: "user-x"), identity: { identity }).order
                    _ = try await ledger.fulfil(Fixtures.payment(order, txn: "abandoned-1"), at: Fixtures.now)
                    throw Abandoned()
                }
            }
            #expect(try await ledger.order(number: "T-ABANDONED") == nil)
            #expect(try await ledger.claimWebhooks(limit: 100, lease: 60, now: Fixtures.now).isEmpty)

            let orders = try await ledger.atomically {
                var orders: [Order] = []
                for n in 0..<3 {
                    let order = try await ledger.createOrder(Fixtures.newOrder(version, user: "user-\(n)"), identity: Fixtures.randomIdentity).order
                    _ = try await ledger.fulfil(Fixtures.payment(order, txn: "txn-\(n)"), at: Fixtures.now)
                    orders.append(order)
                }
                return orders
            }
            for order in orders {
                #expect(try await ledger.events(orderNo: order.orderNo).map(\.kind) == ["created", "paid", "fulfilled"])
            }
            let webhooks = try await ledger.claimWebhooks(limit: 100, lease: 60, now: Fixtures.now)
            let expected = orders.flatMap { order in
                ["order.created", "order.paid", "order.fulfilled"].map { (order.orderNo, $0) }
            }
            #expect(webhooks.map { Self.orderNo(in: $0.payload) } == expected.map(\.0))
            #expect(webhooks.map(\.type) == expected.map(\.1))
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
