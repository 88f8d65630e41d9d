import Foundation
import Ledger
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// "Store first, then apply" means one thing for every signal (``Inbox``): a notification's entry, what it records and
/// its verdict commit together, and one refused after it began leaves nothing of what it began.
@Suite struct NotificationWriteTests {
    @Test(
        "an App Store notification refused midway (its product is not in the catalog) keeps its entry, failed, and nothing it began: not even its subscription signal"
    )
    func refusedMidwayLeavesNothing() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let store = try #require(components.sandbox?.appStore)
            // A subscription of a product this server does not sell, bound to alice's order: its signal is kept
            // first, then recording its payment is refused.
            let (id, jws) = try await store.purchase(
                productID: "com.example.unlisted.monthly", type: "Auto-Renewable Subscription",
                appAccountToken: order.orderUUID)
            let status = try await AppStoreFlowTests.notify(
                client, try await store.notification(type: "SUBSCRIBED", signedTransaction: jws))
            #expect(status != .ok)
            #expect(try await components.ledger.subscriptionSignals(chain: id).isEmpty)
            let problems = try await components.ledger.inboxProblems(limit: 10)
            #expect(problems.contains { $0.channel == .appStore && $0.kind == .notify && $0.verdict == .failed })
            #expect(try await components.ledger.payment(channel: .appStore, providerTransactionID: id) == nil)
        }
    }
}
