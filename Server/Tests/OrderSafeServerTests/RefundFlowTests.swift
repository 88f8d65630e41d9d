import Engine
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import NIOCore
import OrderSafeModel
import Testing

@testable import OrderSafeServer

@Suite("Merchant refunds through the providers: grants taken back exactly once")
struct RefundFlowTests {
    static func refund(_ client: some TestClientProtocol, _ orderNo: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/admin/orders/\(orderNo)/refund", method: .post,
            headers: [.authorization: "Bearer \(TestServer.adminKey)", .contentType: "application/json"],
            body: ByteBuffer(string: #"{"reason":"customer request"}"#))
    }

    static func boxes(_ client: some TestClientProtocol, _ token: String) async throws -> Int64 {
        let holdings = try await client.execute(
            uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
        return try holdings.decoded(HoldingsResponse.self).balances.first { $0.name == "gift_boxes" }?.amount ?? 0
    }

    @Test(
        "a paid order is refunded at its provider and its grants reversed once; repeats change nothing",
        arguments: ["alipay", "wechatpay"])
    func refund(channel: String) async throws {
        try await ReconciliationFlowTests.withServer { client, _, _, alice in
            let created = try await ReconciliationFlowTests.order(client, alice, channel: channel)
            let unpaid = try await Self.refund(client, created.order.orderNo)
            #expect(unpaid.status == .conflict)
            try await ReconciliationFlowTests.pay(client, created)
            _ = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice),
                body: ByteBuffer(string: #"{"result":"success"}"#))
            #expect(try await Self.boxes(client, alice) == 1)
            let first = try await Self.refund(client, created.order.orderNo)
            #expect(first.status == .ok, "\(String(buffer: first.body))")
            #expect(String(buffer: first.body).contains(#""outcome":"refunded""#))
            let second = try await Self.refund(client, created.order.orderNo)
            #expect(String(buffer: second.body).contains(#""outcome":"already_refunded""#))
            #expect(try await Self.boxes(client, alice) == 0)
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .refunded)
        }
    }

    @Test("the provider's notification of the refund overtakes its answer: the operator still hears it refunded, once")
    func notificationOvertakesTheAnswer() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let created = try await ReconciliationFlowTests.order(client, alice, channel: "alipay")
            try await ReconciliationFlowTests.pay(client, created)
            _ = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice), body: ByteBuffer(string: #"{"result":"success"}"#))
            #expect(try await Self.boxes(client, alice) == 1)
            let refunds = RefundService(
                ledger: components.ledger, refunders: [.alipay: OvertakenRefunder(ledger: components.ledger)],
                clock: components.clock)
            let (order, outcome) = try await refunds.refund(
                orderNo: created.order.orderNo, reason: nil, operatorName: "alice-ops")
            #expect(outcome == .reversed(order), "the refund asked for was made: not 'already refunded'")
            #expect(order.status == .refunded)
            #expect(try await Self.boxes(client, alice) == 0, "taken back once")
            let events = try await components.ledger.events(orderNo: created.order.orderNo)
            #expect(
                events.contains { $0.kind == .refundRequested && $0.evidence?.contains("operator:alice-ops") == true })
        }
    }

    @Test("App Store orders are Apple's to refund (422); unknown orders are 404; the admin key is required")
    func refusals() async throws {
        try await ReconciliationFlowTests.withServer { client, _, _, alice in
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            #expect(try await Self.refund(client, order.orderNo).status == .unprocessableContent)
            #expect(try await Self.refund(client, "OS-NOPE").status == .notFound)
            let anonymous = try await client.execute(uri: "/v1/admin/orders/\(order.orderNo)/refund", method: .post)
            #expect(anonymous.status == .unauthorized)
        }
    }
}

/// A provider whose notification of the refund reaches the ledger before its answer reaches the caller (as Alipay's can:
/// the notification is sent as the refund is made).
struct OvertakenRefunder: OrderRefunder {
    let ledger: any OrderBook

    func refund(_ order: Order, payment: RecordedPayment, reason: String?) async throws -> String {
        _ = try await ledger.reverse(
            Reversal(
                channel: payment.channel, providerTransactionID: payment.providerTransactionID, kind: .refunded,
                cause: .notification, evidence: "inbox:1"),
            at: Date())
        return "2026112922001400000000000001"
    }
}
