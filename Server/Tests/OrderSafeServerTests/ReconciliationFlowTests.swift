import Engine
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import OrderSafeServer

@Suite("Reconciliation through the server: lost notifications found by query, unpaid orders closed, hints and cancels")
struct ReconciliationFlowTests {
    /// Runs `body` on a fresh server whose provider notifications are all lost, with its job runner, a clock to move
    /// and a token for alice.
    static func withServer(
        _ body: @escaping @Sendable (any TestClientProtocol, JobRunner, ManualClock, String) async throws -> Void
    ) async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents { client, components, clock in
            try await body(client, components.runner, clock, alice)
        }
    }

    static func order(_ client: some TestClientProtocol, _ token: String, channel: String) async throws -> OrderResponse
    {
        let response = try await TestServer.createOrder(client, token: token, product: "gift_box", channel: channel)
        #expect(response.status == .created)
        return try response.decoded(OrderResponse.self)
    }

    static func pay(_ client: some TestClientProtocol, _ created: OrderResponse) async throws {
        let response: TestResponse
        if let alipay = created.alipay {
            response = try await client.execute(
                uri: "/sandbox/alipay/pay", method: .post, body: ByteBuffer(string: alipay.orderString))
        } else {
            let body = try JSONEncoder().encode(created.wechatpay!)
            response = try await client.execute(
                uri: "/sandbox/wechatpay/pay", method: .post, body: ByteBuffer(bytes: body))
        }
        #expect(response.status == .ok, "\(String(buffer: response.body))")
    }

    static func status(_ client: some TestClientProtocol, _ token: String, _ orderNo: String) async throws
        -> OrderStatus
    {
        let read = try await client.execute(
            uri: "/v1/orders/\(orderNo)", method: .get, headers: TestServer.bearer(token))
        return try read.decoded(OrderResponse.self).order.status
    }

    @Test(
        "a payment whose notification is lost is found by the scheduled query and fulfilled once",
        arguments: ["alipay", "wechatpay"])
    func lostNotification(channel: String) async throws {
        try await Self.withServer { client, runner, clock, alice in
            let created = try await Self.order(client, alice, channel: channel)
            try await Self.pay(client, created)
            // Only the recurring jobs (inbox sweep, App Store history) run now: the first query is a minute away.
            #expect(try await runner.runDue().done == 0)
            #expect(try await Self.status(client, alice, created.order.orderNo) == .created)
            clock.advance(by: 61)
            let tally = try await runner.runDue()
            #expect(tally.done == 1)
            #expect(try await Self.status(client, alice, created.order.orderNo) == .fulfilled)
            clock.advance(by: 3600)
            #expect(try await runner.runDue().done == 0)  // final: no more queries
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 1)])
        }
    }

    @Test(
        "an order left unpaid is queried on a backoff schedule, then closed at the provider and in the ledger",
        arguments: ["alipay", "wechatpay"])
    func unpaidCloses(channel: String) async throws {
        try await Self.withServer { client, runner, clock, alice in
            let created = try await Self.order(client, alice, channel: channel)
            var queries = 0
            for _ in 0..<200 {
                clock.advance(by: 15)
                queries += try await runner.runDue().total
                if try await Self.status(client, alice, created.order.orderNo) != .created { break }
            }
            #expect(try await Self.status(client, alice, created.order.orderNo) == .closed)
            #expect(queries >= 5 && queries < 40)
            // Too late: the provider refuses to take the payment for a closed order.
            let late: TestResponse
            if let alipay = created.alipay {
                late = try await client.execute(
                    uri: "/sandbox/alipay/pay", method: .post, body: ByteBuffer(string: alipay.orderString))
            } else {
                late = try await client.execute(
                    uri: "/sandbox/wechatpay/pay", method: .post,
                    body: ByteBuffer(bytes: try JSONEncoder().encode(created.wechatpay!)))
            }
            #expect(late.status == .badRequest)
        }
    }

    @Test(
        "back without a callback: the answer says what the provider said of an unpaid order (Alipay: no trade yet, WAIT_BUYER_PAY; WeChat Pay: NOTPAY), and nothing once it is paid",
        arguments: ["alipay", "wechatpay"])
    func providerAnswer(channel: String) async throws {
        try await Self.withServer { client, _, clock, alice in
            let created = try await Self.order(client, alice, channel: channel)
            func ask() async throws -> OrderResponse {
                clock.advance(by: 5)
                return try await client.execute(
                    uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                    headers: TestServer.bearer(alice), body: ByteBuffer(string: #"{"result":"pending"}"#)
                ).decoded(OrderResponse.self)
            }
            let unpaid = try await ask()
            #expect(unpaid.providerAnswer == .notPaid && unpaid.order.status == .paying)
            try await Self.pay(client, created)
            let paid = try await ask()
            #expect(paid.providerAnswer == nil && paid.order.status == .fulfilled)
        }
    }

    @Test(
        "the app's success hint asks the provider at once, once per 5 s; a hint without a payment changes nothing but the history"
    )
    func clientResult() async throws {
        try await Self.withServer { client, _, clock, alice in
            let created = try await Self.order(client, alice, channel: "wechatpay")
            let hint = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice),
                body: ByteBuffer(string: #"{"result":"success","detail":"errCode 0"}"#))
            // the SDK said so; WeChat Pay did not, and the answer says what WeChat Pay said
            #expect(try hint.decoded(OrderResponse.self).order.status == .paying)
            #expect(try hint.decoded(OrderResponse.self).providerAnswer == .notPaid)
            try await Self.pay(client, created)
            // Within the cooldown a repeated hint does not ask WeChat Pay again.
            let repeated = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice),
                body: ByteBuffer(string: #"{"result":"success"}"#))
            #expect(try repeated.decoded(OrderResponse.self).order.status == .paying)
            #expect(try repeated.decoded(OrderResponse.self).providerAnswer == nil, "not asked: no word of it")
            clock.advance(by: 5)
            let again = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice),
                body: ByteBuffer(string: #"{"result":"success"}"#))
            #expect(try again.decoded(OrderResponse.self).order.status == .fulfilled)
            #expect(try again.decoded(OrderResponse.self).providerAnswer == nil)
            let bad = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(alice),
                body: ByteBuffer(string: #"{"result":"paid-trust-me"}"#))
            #expect(bad.status == .badRequest)
            let bob = try await TestServer.token("bob", lifetime: 30 * 86400)
            let foreign = try await client.execute(
                uri: "/v1/orders/\(created.order.orderNo)/client-result", method: .post,
                headers: TestServer.bearer(bob),
                body: ByteBuffer(string: #"{"result":"success"}"#))
            #expect(foreign.status == .notFound)
        }
    }

    @Test("cancel closes an unpaid order at the provider; a paid one is not cancelled (409) and stays fulfilled")
    func cancel() async throws {
        try await Self.withServer { client, _, _, alice in
            let unpaid = try await Self.order(client, alice, channel: "alipay")
            let cancelled = try await client.execute(
                uri: "/v1/orders/\(unpaid.order.orderNo)/cancel", method: .post, headers: TestServer.bearer(alice))
            #expect(try cancelled.decoded(OrderResponse.self).order.status == .cancelled)

            let paid = try await Self.order(client, alice, channel: "alipay")
            try await Self.pay(client, paid)  // its notification is lost
            let refused = try await client.execute(
                uri: "/v1/orders/\(paid.order.orderNo)/cancel", method: .post, headers: TestServer.bearer(alice))
            #expect(refused.status == .conflict)
            #expect(try refused.errorCode() == "order_not_cancellable")
            #expect(try await Self.status(client, alice, paid.order.orderNo) == .fulfilled)
        }
    }
}
