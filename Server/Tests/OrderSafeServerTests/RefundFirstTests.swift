import Foundation
import HummingbirdTesting
import LedgerTestSupport
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// The app crashed before submitting, the user asked Apple for a refund, then reopened the app: the refund reaches
/// the server first, and must win at once, not after a sweep.
@Suite("Refunds that arrive before their purchase win at once")
struct RefundFirstTests {
    static let monthly = "com.example.ordersafe.vip.monthly"

    @Test(
        "REFUND first, then the app's pre-refund transaction: rejected as refunded, nothing granted; the reverse order ends the same",
        arguments: TestEngine.available)
    func refundBeforeSubmission(engine: TestEngine) async throws {
        for refundFirst in [true, false] {
            try await TestServer.withComponents(engine: engine) { client, components, _ in
                let store = components.sandbox!.appStore
                let alice = try await TestServer.token("alice")
                let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
                let (id, jws) = try await store.purchase(
                    productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
                let refund = try await store.notification(
                    type: "REFUND", signedTransaction: try await store.refund(transactionID: id))
                if refundFirst {
                    #expect(try await AppStoreFlowTests.notify(client, refund) == .ok)
                    let result = try await AppStoreFlowTests.submit(client, token: alice, jws: jws)
                    // Recorded (the app finishes it), as paid and refunded.
                    #expect(result.verdict == .recorded && result.order?.status == .refunded, "\(result)")
                } else {
                    #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
                    #expect(try await AppStoreFlowTests.notify(client, refund) == .ok)
                }
                #expect(try await AppStoreFlowTests.balance(client, token: alice) == 0)
                #expect(try await ReconciliationFlowTests.status(client, alice, order.orderNo) == .refunded)
                let events = try await components.ledger.events(orderNo: order.orderNo).map(\.kind.rawValue)
                #expect(events.suffix(3) == ["paid", "fulfilled", "refunded"], "\(events)")
            }
        }
    }

    @Test("a renewal's REFUND before the renewal itself: the period is never granted", arguments: TestEngine.available)
    func renewalRefundFirst(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let (original, first) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: first).verdict == .recorded)
            let firstEnd = try await AppStoreFlowTests.vipExpiry(client, token: alice)
            clock.advance(by: 86400)
            let (renewal, renewed) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
            let refund = try await store.notification(
                type: "REFUND", signedTransaction: try await store.refund(transactionID: renewal))
            #expect(try await AppStoreFlowTests.notify(client, refund) == .ok)
            #expect(
                try await AppStoreFlowTests.notify(
                    client, try await store.notification(type: "DID_RENEW", signedTransaction: renewed)) == .ok)
            #expect(try await AppStoreFlowTests.vipExpiry(client, token: alice) == firstEnd)
            let payment = try #require(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: renewal))
            #expect(try await components.ledger.order(number: payment.orderNo)?.status == .refunded)
        }
    }
}
