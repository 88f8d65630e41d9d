import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import ServiceLifecycle
import Testing
import WeChatPay
import _CryptoExtras

@testable import OrderSafeServer

@Suite("WeChat Pay through the server: notifications stored, verified on raw bytes, applied once")
struct WeChatPayFlowTests {
    /// WeChat Pay's side of the sandbox this server runs: its signing key and the APIv3 key, read from the data folder.
    struct Side {
        let signer: WeChatPaySideSigner
        let cipher: APIv3Cipher

        /// A signed notification for `transaction`, timestamped `timestamp`.
        func notification(
            _ transaction: String, timestamp: Int64 = Int64(TestServer.now.timeIntervalSince1970),
            id: String = UUID().uuidString,
            eventType: String = "TRANSACTION.SUCCESS"
        ) throws -> (HTTPFields, String) {
            let body = try signer.notificationBody(
                id: id, eventType: eventType, createTime: "2026-11-18T19:10:00+08:00", plaintext: transaction,
                cipher: cipher, nonce: String(UUID().uuidString.prefix(12)))
            var fields: HTTPFields = [.contentType: "application/json"]
            for (name, value) in try signer.headers(body: body, timestamp: timestamp, nonce: UUID().uuidString) {
                fields[HTTPField.Name(name)!] = value
            }
            return (fields, body)
        }
    }

    static func settings(port: Int = 8080) async throws -> (Settings, Side) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-wechatpay-\(UUID().uuidString)"
        ).path
        let settings = try await TestServer.settings(extra: [
            "ORDERSAFE_SERVER_DATA_DIR": directory, "ORDERSAFE_SERVER_PORT": "\(port)",
        ])
        _ = try SandboxProviders(settings: settings.server, logger: TestLog.logger)
        let pem = try String(
            contentsOfFile: directory + "/sandbox/wechatpay-simulator-private-key.pem", encoding: .utf8)
        let apiV3Key = try String(contentsOfFile: directory + "/sandbox/wechatpay-apiv3-key", encoding: .utf8)
        let side = Side(
            signer: WeChatPaySideSigner(
                platformKey: try _RSA.Signing.PrivateKey(pemRepresentation: pem),
                serial: WeChatPaySimulator.publicKeyID),
            cipher: try APIv3Cipher(apiV3Key: apiV3Key))
        return (settings, side)
    }

    static func transaction(
        _ order: Order, id: String, fen: Int64? = nil, appID: String = WeChatPaySimulator.appID
    ) -> String {
        #"{"appid":"\#(appID)","mchid":"\#(WeChatPaySimulator.merchantID)","out_trade_no":"\#(order.orderNo)","transaction_id":"\#(id)","trade_type":"APP","trade_state":"SUCCESS","trade_state_desc":"支付成功","success_time":"2026-11-18T19:09:58+08:00","amount":{"total":\#(fen ?? order.amount.amountMinor),"currency":"CNY"}}"#
    }

    static func post(_ client: some TestClientProtocol, _ notification: (HTTPFields, String)) async throws -> (
        Int, String
    ) {
        let response = try await client.execute(
            uri: "/v1/notify/wechatpay", method: .post, headers: notification.0,
            body: ByteBuffer(string: notification.1))
        return (Int(response.status.code), String(buffer: response.body))
    }

    static func withWeChatOrder(
        _ body: @escaping @Sendable (any TestClientProtocol, Side, String, Order) async throws -> Void
    ) async throws {
        let (settings, side) = try await settings()
        let app = try await OrderSafeApplication.build(
            settings: settings, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        let alice = try await TestServer.token("alice")
        try await app.test(.router) { client in
            let response = try await TestServer.createOrder(
                client, token: alice, product: "gift_box", channel: "wechatpay")
            #expect(response.status == .created)
            try await body(client, side, alice, try response.decoded(OrderResponse.self).order)
        }
    }

    @Test("a verified notification fulfils once; replays, re-sends, forgeries, stale and foreign ones change nothing")
    func notifications() async throws {
        try await Self.withWeChatOrder { client, side, alice, order in
            let paid = try side.notification(Self.transaction(order, id: "4200002026111800001"))
            #expect(try await Self.post(client, paid) == (204, ""))
            #expect(try await Self.post(client, paid) == (204, ""))  // byte-identical replay
            #expect(
                try await Self.post(client, try side.notification(Self.transaction(order, id: "4200002026111800001")))
                    == (204, ""))
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).order.status == .fulfilled)

            let forger = Side(
                signer: WeChatPaySideSigner(
                    platformKey: try _RSA.Signing.PrivateKey(keySize: .bits2048),
                    serial: WeChatPaySimulator.publicKeyID), cipher: side.cipher)
            let forged = try await Self.post(
                client, try forger.notification(Self.transaction(order, id: "4200002026111899999")))
            #expect(forged.0 == 401 && forged.1.contains(#""code":"FAIL""#) && forged.1.contains("signature"))
            let stale = try side.notification(
                Self.transaction(order, id: "4200002026111899998"),
                timestamp: Int64(TestServer.now.timeIntervalSince1970) - 3600)
            #expect(try await Self.post(client, stale).0 == 401)
            var unsigned = paid
            unsigned.0[HTTPField.Name("Wechatpay-Signature")!] = nil
            #expect(try await Self.post(client, unsigned).0 == 401)
            let foreign = try side.notification(
                Self.transaction(order, id: "4200002026111899997", appID: "wx-someone-else"))
            #expect(try await Self.post(client, foreign).0 == 400)
            var unknown = order
            unknown.orderNo = "OS-NOT-OURS"
            #expect(
                try await Self.post(client, try side.notification(Self.transaction(unknown, id: "4200002026111899996")))
                    .0 == 404)

            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 1)])
            let admin = try await client.execute(
                uri: "/v1/admin/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(String(buffer: admin.body).contains(#""evidence":"wechatpay:4200002026111800001 inbox:"#))
        }
    }

    @Test("REFUND.SUCCESS for the whole payment reverses its grants once; a partial refund is noted, not reversed")
    func refundNotifications() async throws {
        try await Self.withWeChatOrder { client, side, alice, order in
            let transactionID = "4200002026111800003"
            #expect(
                try await Self.post(client, try side.notification(Self.transaction(order, id: transactionID))) == (
                    204, ""
                ))
            func refund(_ fen: Int64, _ number: String) -> String {
                #"{"mchid":"\#(WeChatPaySimulator.merchantID)","out_trade_no":"\#(order.orderNo)","transaction_id":"\#(transactionID)","out_refund_no":"\#(number)","refund_id":"50300\#(number)","refund_status":"SUCCESS","success_time":"2026-11-19T10:00:00+08:00","amount":{"total":\#(order.amount.amountMinor),"refund":\#(fen),"payer_total":\#(order.amount.amountMinor),"payer_refund":\#(fen)}}"#
            }
            let partial = try side.notification(refund(100, "R1"), eventType: "REFUND.SUCCESS")
            #expect(try await Self.post(client, partial) == (204, ""))
            let holdings = {
                try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            }
            #expect(
                try await holdings().decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 1)]
            )
            let full = try side.notification(refund(order.amount.amountMinor, "R2"), eventType: "REFUND.SUCCESS")
            #expect(try await Self.post(client, full) == (204, ""))
            #expect(
                try await Self.post(
                    client, try side.notification(refund(order.amount.amountMinor, "R2"), eventType: "REFUND.SUCCESS"))
                    == (204, ""))
            #expect(
                try await holdings().decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 0)]
            )
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).order.status == .refunded)
        }
    }

    @Test("a notification whose amount differs from the order is recorded and flagged, never credited")
    func amountMismatch() async throws {
        try await Self.withWeChatOrder { client, side, alice, order in
            #expect(
                try await Self.post(
                    client, try side.notification(Self.transaction(order, id: "4200002026111800002", fen: 1))) == (
                        204, ""
                    ))
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).order.status == .flagged)
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances.isEmpty)
        }
    }

    @Test("a merchant key configured as WeChat Pay's, or a short APIv3 key, is named under its setting")
    func configuration() async throws {
        let merchantKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let base = [
            "ORDERSAFE_WECHATPAY_MCH_ID": "1900000009", "ORDERSAFE_WECHATPAY_APP_ID": "wx1",
            "ORDERSAFE_WECHATPAY_MERCHANT_SERIAL": "AB",
            "ORDERSAFE_WECHATPAY_MERCHANT_PRIVATE_KEY": merchantKey.pemRepresentation,
            "ORDERSAFE_WECHATPAY_NOTIFY_URL": "https://merchant.example/v1/notify/wechatpay",
            "ORDERSAFE_WECHATPAY_PUBLIC_KEY_ID": "PUB_KEY_ID_1",
            "ORDERSAFE_WECHATPAY_PUBLIC_KEY": merchantKey.publicKey.pemRepresentation,
        ]
        for (extra, key) in [
            (["ORDERSAFE_WECHATPAY_APIV3_KEY": "0123456789abcdef0123456789abcdef"], "wechatpay.public_key"),
            (["ORDERSAFE_WECHATPAY_APIV3_KEY": "too-short"], "wechatpay.apiv3_key"),
        ] {
            let settings = try await TestServer.settings(extra: base.merging(extra) { $1 })
            await #expect(throws: SettingsError.self) {
                _ = try await OrderSafeApplication.build(settings: settings, logger: TestLog.logger)
            }
            do {
                _ = try await OrderSafeApplication.build(settings: settings, logger: TestLog.logger)
            } catch let error as SettingsError {
                #expect(error.key == key, "\(error)")
            }
        }
        await #expect(throws: SettingsError.self) {
            try await TestServer.settings(extra: base.filter { $0.key != "ORDERSAFE_WECHATPAY_PUBLIC_KEY" })
        }
    }

    @Test("end to end over loopback: order, the sandbox WeChat Pay pays, its notification fulfils the order")
    func endToEnd() async throws {
        let (settings, _) = try await Self.settings(port: try TestServer.freePort())
        try await AlipayFlowTests.live(settings) { base, alice in
            let created = try await AlipayFlowTests.request(
                base + "/v1/orders", method: .POST, token: alice,
                body: #"{"product_id":"consultation","channel":"wechatpay"}"#)
            let response = try OrderSafeJSON.decoder().decode(OrderResponse.self, from: Data(created))
            let invocation = try #require(response.wechatpay)
            let json = String(decoding: try JSONEncoder().encode(invocation), as: UTF8.self)
            _ = try await AlipayFlowTests.request(
                base + "/sandbox/wechatpay/pay", method: .POST, token: nil, body: json)
            #expect(
                try await AlipayFlowTests.waitForStatus(
                    .fulfilled, base: base, orderNo: response.order.orderNo, token: alice) == .fulfilled)
        }
    }
}
