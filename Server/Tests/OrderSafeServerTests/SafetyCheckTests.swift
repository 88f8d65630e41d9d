import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// One test per safety check that once could be deleted with every test still green (measured by breaking each
/// check in turn): each drives the check through the HTTP routes, where a user would meet the bug.
@Suite("Safety checks, each guarded through the routes")
struct SafetyCheckTests {
    static let coins = AppStoreFlowTests.coins
    static let monthly = "com.example.ordersafe.vip.monthly"

    static func receiptSubmission(_ receipt: String, transactionID: String, applicationUsername: String) -> String {
        #"{"receipt":"\#(receipt)","transaction_id":"\#(transactionID)","application_username":"\#(applicationUsername)"}"#
    }

    static func vipExpiry(_ client: some TestClientProtocol, _ token: String) async throws -> Date? {
        try await AppStoreFlowTests.vipExpiry(client, token: token)
    }

    @Test("StoreKit 1: a userID#orderNo binding names its own user's order; naming another user's order binds nothing")
    func legacyBindingNamesItsUser() async throws {
        try await AppStoreFlowTests.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let mallory = try await TestServer.token("mallory")
            let aliceOrder = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (stolenID, _) = try await store.purchase(productID: Self.coins)
            let forged = try await AppStoreFlowTests.submit(
                client, token: mallory,
                Self.receiptSubmission(
                    try await store.appReceipt(), transactionID: stolenID,
                    applicationUsername: "mallory#\(aliceOrder.orderNo)"))
            let verdict = try forged.decoded(AppStoreSubmissionResponse.self)
            // Mallory paid for it, so it is hers, in an order of her own: alice's order stays unpaid.
            #expect(verdict.verdict == .recorded && verdict.transactions.first?.order?.userID == "mallory")
            #expect(verdict.transactions.first?.order?.orderNo != aliceOrder.orderNo)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 0)
            #expect(try await ReconciliationFlowTests.status(client, alice, aliceOrder.orderNo) == .created)

            let (ownID, _) = try await store.purchase(productID: Self.coins)
            let own = try await AppStoreFlowTests.submit(
                client, token: alice,
                Self.receiptSubmission(
                    try await store.appReceipt(), transactionID: ownID,
                    applicationUsername: "alice#\(aliceOrder.orderNo)"))
            #expect(
                try own.decoded(AppStoreSubmissionResponse.self).transactions.first?.order?.orderNo
                    == aliceOrder.orderNo)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 60)
        }
    }

    @Test("StoreKit 1: a receipt of another app, signed by the same authority, is rejected and credits nothing")
    func receiptOfAnotherApp() async throws {
        try await AppStoreFlowTests.withServer { client, store in
            let bob = try await TestServer.token("bob")
            let order = try await TestServer.createOrder(client, token: bob).decoded(OrderResponse.self).order
            let (id, _) = try await store.purchase(productID: Self.coins)
            let response = try await AppStoreFlowTests.submit(
                client, token: bob,
                Self.receiptSubmission(
                    try await store.appReceipt(bundleID: "com.example.other-app"), transactionID: id,
                    applicationUsername: order.orderUUID.uuidString))
            let decoded = try response.decoded(AppStoreSubmissionResponse.self)
            #expect(decoded.verdict == .rejected && decoded.transactions.first?.error?.code == "invalid_receipt")
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 0)
        }
    }

    @Test("a family-shared renewal belongs to the family member who submits it, not to the original's buyer")
    func familySharedRenewal() async throws {
        try await AppStoreFlowTests.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let bob = try await TestServer.token("bob")
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let (first, jws) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let aliceEnd = try await Self.vipExpiry(client, alice)
            let (_, shared) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", originalTransactionID: first,
                familyShared: true)
            let result = try await AppStoreFlowTests.submit(client, token: bob, jws: shared)
            #expect(result.verdict == .recorded && result.order?.userID == "bob")
            #expect(try await Self.vipExpiry(client, bob) != nil)
            #expect(try await Self.vipExpiry(client, alice) == aliceEnd)
        }
    }

    @Test("a family-shared transaction that carries another member's order token is the submitter's, not that order's")
    func familySharedTokenIgnored() async throws {
        try await AppStoreFlowTests.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let bob = try await TestServer.token("bob")
            let order = try await TestServer.createOrder(client, token: alice, product: "remove_ads").decoded(
                OrderResponse.self
            ).order
            let (_, shared) = try await store.purchase(
                productID: "com.example.ordersafe.removeads", type: "Non-Consumable", appAccountToken: order.orderUUID,
                familyShared: true)
            let result = try await AppStoreFlowTests.submit(client, token: bob, jws: shared)
            #expect(result.verdict == .recorded && result.order?.userID == "bob", "\(result)")
            #expect(try await ReconciliationFlowTests.status(client, alice, order.orderNo) == .created)
        }
    }

    @Test("a refunded transaction the app submits is reversed, not credited: first seen, or after it was recorded")
    func revokedSubmission() async throws {
        try await AppStoreFlowTests.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (id, _) = try await store.purchase(productID: Self.coins, appAccountToken: order.orderUUID)
            let refunded = try await store.refund(transactionID: id)
            let first = try await AppStoreFlowTests.submit(client, token: alice, jws: refunded)
            #expect(first.verdict == .recorded && first.order?.status == .refunded, "\(first)")
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 0)
            // The ledger shows it paid and refunded, not a payment that never happened.
            #expect(try await ReconciliationFlowTests.status(client, alice, order.orderNo) == .refunded)

            let second = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (paidID, paid) = try await store.purchase(productID: Self.coins, appAccountToken: second.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: paid).verdict == .recorded)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 60)
            let later = try await store.refund(transactionID: paidID)
            let laterResult = try await AppStoreFlowTests.submit(client, token: alice, jws: later)
            #expect(laterResult.verdict == .recorded && laterResult.order?.status == .refunded, "\(laterResult)")
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 0)
            #expect(try await ReconciliationFlowTests.status(client, alice, second.orderNo) == .refunded)
        }
    }

    @Test("Alipay refunding less than was paid is not taken for a full refund: the grants stay, the admin sees 502")
    func shortAlipayRefund() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice")
            let created = try await ReconciliationFlowTests.order(client, alice, channel: "alipay")
            try await ReconciliationFlowTests.pay(client, created)
            _ = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice),
                body: ByteBuffer(string: #"{"result":"success"}"#))
            #expect(try await RefundFlowTests.boxes(client, alice) == 1)
            await components.sandbox!.alipay.injectGatewayFault(.shortRefund)
            let refund = try await RefundFlowTests.refund(client, created.order.orderNo)
            #expect(refund.status == .badGateway, "\(String(buffer: refund.body))")
            #expect(try await RefundFlowTests.boxes(client, alice) == 1)
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) != .refunded)
        }
    }
}
