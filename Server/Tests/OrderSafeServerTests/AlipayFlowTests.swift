import Alipay
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import NIOHTTP1
import OrderSafeModel
import ServiceLifecycle
import Testing
import _CryptoExtras

@testable import OrderSafeServer

@Suite("Alipay through the server: notifications stored, verified, applied once")
struct AlipayFlowTests {
    /// A fresh data folder, so the sandbox keys this test reads are the ones its server uses.
    static func settings(port: Int = 8080, extra: [String: String] = [:]) async throws -> (Settings, AlipaySideSigner) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-alipay-\(UUID().uuidString)"
        ).path
        let settings = try await TestServer.settings(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": directory, "ORDERSAFE_SERVER_PORT": "\(port)"].merging(extra) { $1 })
        _ = try SandboxProviders(settings: settings.server, logger: TestLog.logger)
        let pem = try String(contentsOfFile: directory + "/sandbox/alipay-simulator-private-key.pem", encoding: .utf8)
        return (settings, AlipaySideSigner(privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: pem)))
    }

    static func notification(
        for order: Order, tradeNo: String, amount: String? = nil, appID: String = AlipaySimulator.appID
    )
        -> [String: String]
    {
        [
            "notify_id": UUID().uuidString, "notify_type": "trade_status_sync", "notify_time": "2026-11-18 19:10:00",
            "app_id": appID, "seller_id": "2088000000000001", "out_trade_no": order.orderNo, "trade_no": tradeNo,
            "trade_status": "TRADE_SUCCESS", "total_amount": amount ?? order.amount.decimalString, "charset": "utf-8",
        ]
    }

    static func post(_ client: some TestClientProtocol, _ body: String) async throws -> (HTTPResponse.Status, String) {
        let response = try await client.execute(
            uri: "/v1/notify/alipay", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: body))
        return (response.status, String(buffer: response.body))
    }

    /// Runs `body` on a fresh server with one Alipay order of alice's for the gift box.
    static func withAlipayOrder(
        _ body: @escaping @Sendable (any TestClientProtocol, AlipaySideSigner, String, Order) async throws -> Void
    ) async throws {
        let (settings, alipay) = try await settings()
        let app = try await OrderSafeApplication.build(
            settings: settings, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        let alice = try await TestServer.token("alice")
        try await app.test(.router) { client in
            let order = try await TestServer.createOrder(client, token: alice, product: "gift_box", channel: "alipay")
                .decoded(OrderResponse.self).order
            try await body(client, alipay, alice, order)
        }
    }

    @Test("a bad Alipay key is reported under the setting it came from")
    func keyErrorsNameTheirSetting() async throws {
        let alipayKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let appKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let base = [
            "ORDERSAFE_ALIPAY_APP_ID": "2021000000000009",
            "ORDERSAFE_ALIPAY_NOTIFY_URL": "https://merchant.example/v1/notify/alipay",
        ]
        for (extra, key) in [
            (
                [
                    "ORDERSAFE_ALIPAY_APP_PRIVATE_KEY": "not a key",
                    "ORDERSAFE_ALIPAY_PUBLIC_KEY": alipayKey.publicKey.pemRepresentation,
                ],
                "alipay.app_private_key"
            ),
            (
                [
                    "ORDERSAFE_ALIPAY_APP_PRIVATE_KEY": appKey.pemRepresentation,
                    "ORDERSAFE_ALIPAY_PUBLIC_KEY": "not a key",
                ],
                "alipay.public_key"
            ),
            (
                [
                    "ORDERSAFE_ALIPAY_APP_PRIVATE_KEY": appKey.pemRepresentation,
                    "ORDERSAFE_ALIPAY_PUBLIC_KEY": appKey.publicKey.pemRepresentation,
                ],
                "alipay.public_key"
            ),
        ] {
            let settings = try await TestServer.settings(extra: base.merging(extra) { $1 })
            #expect(throws: SettingsError.self) { try settings.alipay!.credentials() }
            do {
                _ = try settings.alipay!.credentials()
            } catch let error as SettingsError {
                #expect(error.key == key, "\(error)")
            }
        }
    }

    @Test("a verified notification fulfils once; replays, duplicates and forgeries change nothing")
    func notifications() async throws {
        try await Self.withAlipayOrder { client, alipay, alice, order in
            let body = try alipay.notificationBody(Self.notification(for: order, tradeNo: "2026111822001"))
            #expect(try await Self.post(client, body) == (.ok, "success"))
            #expect(try await Self.post(client, body) == (.ok, "success"))  // byte-identical replay
            // new notify_id
            let resent = try alipay.notificationBody(Self.notification(for: order, tradeNo: "2026111822001"))
            #expect(try await Self.post(client, resent) == (.ok, "success"))
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).order.status == .fulfilled)
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 1)])

            let forger = AlipaySideSigner(privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
            let forged = try forger.notificationBody(Self.notification(for: order, tradeNo: "2026111822999"))
            #expect(try await Self.post(client, forged) == (.ok, "failure"))
            #expect(try await Self.post(client, "garbage") == (.ok, "failure"))
            #expect(try await Self.post(client, "a=%ZZ") == (.ok, "failure"))
            let foreign = try alipay.notificationBody(
                Self.notification(for: order, tradeNo: "2026111822998", appID: "2021999"))
            #expect(try await Self.post(client, foreign) == (.ok, "failure"))
            var unknown = order
            unknown.orderNo = "OS-NOT-OURS"
            #expect(
                try await Self.post(client, try alipay.notificationBody(Self.notification(for: unknown, tradeNo: "1")))
                    == (.ok, "failure"))

            let after = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try after.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 1)])
            let admin = try await client.execute(
                uri: "/v1/admin/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(String(buffer: admin.body).contains(#""evidence":"alipay:2026111822001 inbox:"#))
        }
    }

    @Test("a notification whose amount differs from the order is recorded and flagged, never credited")
    func amountMismatch() async throws {
        try await Self.withAlipayOrder { client, alipay, alice, order in
            let body = try alipay.notificationBody(
                Self.notification(for: order, tradeNo: "2026111822002", amount: "0.01"))
            #expect(try await Self.post(client, body) == (.ok, "success"))
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).order.status == .flagged)
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances.isEmpty)
        }
    }

    @Test("a trade_no already recorded for another order is accepted, flagged on the order it claims, credits nothing")
    func tradeNoSeenOnTwoOrders() async throws {
        try await Self.withAlipayOrder { client, alipay, alice, order in
            let bob = try await TestServer.token("bob")
            let bobs = try await TestServer.createOrder(client, token: bob, product: "gift_box", channel: "alipay")
                .decoded(OrderResponse.self).order
            let tradeNo = "2026112622001000000000000001"
            #expect(
                try await Self.post(
                    client, try alipay.notificationBody(Self.notification(for: order, tradeNo: tradeNo))) == (
                        .ok, "success"
                    ))
            // The provider says Bob's order was paid with the same trade_no: kept, answered (Alipay would retry a
            // failure for a day and change nothing), and put in front of an operator.
            #expect(
                try await Self.post(client, try alipay.notificationBody(Self.notification(for: bobs, tradeNo: tradeNo)))
                    == (.ok, "success"))
            let read = try await client.execute(
                uri: "/v1/orders/\(bobs.orderNo)", method: .get, headers: TestServer.bearer(bob))
            #expect(try read.decoded(OrderResponse.self).order.status == .flagged)
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(bob))
            #expect(try holdings.decoded(HoldingsResponse.self).balances.isEmpty)
            let admin = try await client.execute(
                uri: "/v1/admin/orders/\(bobs.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            let detail = String(buffer: admin.body)
            #expect(detail.contains(#""flag_waiting":true"#))
            #expect(detail.contains(#""claiming_order_no":"\#(bobs.orderNo)""#))
            #expect(detail.contains(#""recorded_order_no":"\#(order.orderNo)""#))
            #expect(detail.contains(#""kind":"flagged:payment_id_conflict""#))
        }
    }

    @Test("end to end over loopback: order, the sandbox Alipay pays, its notification fulfils the order")
    func endToEnd() async throws {
        let port = try TestServer.freePort()
        let (settings, _) = try await Self.settings(port: port)
        try await Self.live(settings) { base, alice in
            let created = try await Self.request(
                base + "/v1/orders", method: .POST, token: alice,
                body: #"{"product_id":"consultation","channel":"alipay"}"#)
            let response = try OrderSafeJSON.decoder().decode(OrderResponse.self, from: Data(created))
            let orderString = try #require(response.alipay?.orderString)
            _ = try await Self.request(base + "/sandbox/alipay/pay", method: .POST, token: nil, body: orderString)
            #expect(
                try await Self.waitForStatus(.fulfilled, base: base, orderNo: response.order.orderNo, token: alice)
                    == .fulfilled)
            let holdings = try await Self.request(base + "/v1/me/entitlements", method: .GET, token: alice, body: nil)
            #expect(
                try OrderSafeJSON.decoder().decode(HoldingsResponse.self, from: Data(holdings)).balances
                    == [Balance(name: "consultations", amount: 1)])
        }
    }

    /// Runs the real server on `settings` (its port) around `body`, which gets the base URL and alice's token.
    static func live(_ settings: Settings, _ body: @escaping @Sendable (String, String) async throws -> Void)
        async throws
    {
        let app = try await OrderSafeApplication.build(settings: settings, logger: TestLog.logger)
        let alice = try await TestServer.token("alice", issuedAt: Date())
        let base = "http://127.0.0.1:\(settings.server.port)"
        let services = ServiceGroup(configuration: .init(services: [app], logger: TestLog.logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            defer { Task { await services.triggerGracefulShutdown() } }
            try await Self.waitUntilUp(base)
            try await body(base, alice)
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    /// Polls the order until it reaches `wanted` (``eventually``); returns the last status seen.
    static func waitForStatus(_ wanted: OrderStatus, base: String, orderNo: String, token: String) async throws
        -> OrderStatus
    {
        var status = OrderStatus.created
        _ = try await eventually {
            let read = try await request(base + "/v1/orders/\(orderNo)", method: .GET, token: token, body: nil)
            status = try OrderSafeJSON.decoder().decode(OrderResponse.self, from: Data(read)).order.status
            return status == wanted
        }
        return status
    }

    static func waitUntilUp(_ base: String) async throws {
        let up = try await eventually {
            (try? await request(base + "/healthz", method: .GET, token: nil, body: nil)) != nil
        }
        if !up { Issue.record("server did not come up") }
    }

    static func request(_ url: String, method: NIOHTTP1.HTTPMethod, token: String?, body: String?) async throws
        -> [UInt8]
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: token == nil ? "text/plain" : "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        // Generous, like the polling below: these live servers share two cores with the whole parallel suite.
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        var bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw HTTPError(
                .init(code: Int(response.status.code)), message: bytes.readString(length: bytes.readableBytes) ?? "")
        }
        return bytes.readBytes(length: bytes.readableBytes) ?? []
    }
}
