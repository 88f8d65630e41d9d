import ChannelSupport
import Foundation
import OracleSupport
import OrderSafeModel
import Testing

@testable import Alipay

/// Our signing and verification against python-alipay-sdk and Ant Group's alipay-sdk-python.
@Suite("Alipay interoperability with independent SDKs")
struct AlipayInteropTests {
    static let fzlee = Oracle(name: "alipay-fzlee", script: "alipay_fzlee.py")
    static let official = Oracle(name: "alipay-official", script: "alipay_official.py")

    static let appPrivatePEM = AlipayFixture.appKey.pemRepresentation
    static let appPrivateB64 = AlipayFixture.appKey.derRepresentation.base64EncodedString()
    static let appPublicPEM = AlipayFixture.appKey.publicKey.pemRepresentation
    static let appPublicB64 = AlipayFixture.appKey.publicKey.derRepresentation.base64EncodedString()
    static let alipayPrivatePEM = AlipayFixture.alipayKey.pemRepresentation
    static let alipayPrivateB64 = AlipayFixture.alipayKey.derRepresentation.base64EncodedString()
    static let alipayPublicPEM = AlipayFixture.alipayKey.publicKey.pemRepresentation
    static let alipayPublicB64 = AlipayFixture.alipayKey.publicKey.derRepresentation.base64EncodedString()

    static let notification: [String: String] = [
        "notify_id": "2026112201", "notify_type": "trade_status_sync", "notify_time": "2026-11-22 10:00:00",
        "app_id": AlipayFixture.appID, "seller_id": "2088000000000001", "out_trade_no": "OS20261122-ORACLE",
        "trade_no": "2026112222001499", "trade_status": "TRADE_SUCCESS", "total_amount": "199.00", "charset": "utf-8",
        "subject": "咨询 1 小时 + 报告", "gmt_payment": "2026-11-22 09:59:58",
    ]

    @Test(
        "order strings we sign: both SDKs produce the same signature and verify ours",
        .enabled(if: fzlee.isAvailable && official.isAvailable))
    func orderStrings() async throws {
        let order = AlipayAppPayOrder(
            outTradeNo: "OS20261122-ORACLE", amount: Money(amountMinor: 19900, currency: .cny), subject: "咨询 1 小时 & 报告",
            notifyURL: "https://merchant.example/v1/notify/alipay?x=1",
            expiresAt: AlipayFixture.now.addingTimeInterval(900))
        let orderString = try AlipayRequestSigner(credentials: AlipayFixture.credentials).orderString(
            for: order, at: AlipayFixture.now)
        var params = try FormEncoding.parse(Array(orderString.utf8))
        let sign = params.removeValue(forKey: "sign")!
        let fzlee = try await Self.fzlee.run([
            ["op": "sign", "params": params, "private_key": Self.appPrivatePEM],
            ["op": "verify_request", "params": params, "sign": sign, "public_key": Self.appPublicPEM],
        ])
        #expect(fzlee[0] as? String == sign)
        #expect(fzlee[1] as? Bool == true)
        let official = try await Self.official.run([
            ["op": "sign", "params": params, "private_key": Self.appPrivateB64],
            ["op": "verify", "params": params, "sign": sign, "public_key": Self.appPublicB64],
        ])
        #expect(official[0] as? String == sign)
        #expect(official[1] as? Bool == true)
    }

    @Test(
        "notifications signed by either SDK (as Alipay) verify under ours, and ours verify under both",
        .enabled(if: fzlee.isAvailable && official.isAvailable))
    func notifications() async throws {
        let theirs =
            try await Self.fzlee.run([
                ["op": "sign", "params": Self.notification, "private_key": Self.alipayPrivatePEM]
            ])
            + (try await Self.official.run([
                ["op": "sign", "params": Self.notification, "private_key": Self.alipayPrivateB64]
            ]))
        let verifier = AlipayNotificationVerifier(credentials: AlipayFixture.credentials)
        for sign in theirs.compactMap({ $0 as? String }) {
            var fields = Self.notification
            fields["sign"] = sign
            fields["sign_type"] = "RSA2"
            #expect(try verifier.verify(body: Array(FormEncoding.encode(fields).utf8)).tradeNo == "2026112222001499")
        }
        #expect(theirs.count == 2)

        let ours = try FormEncoding.parse(
            Array(try AlipayFixture.alipaySigner.notificationBody(Self.notification).utf8))
        var unsigned = ours
        let sign = unsigned.removeValue(forKey: "sign")!
        #expect(
            try await Self.fzlee.run([
                ["op": "verify", "params": unsigned, "sign": sign, "public_key": Self.alipayPublicPEM]
            ])
            .first as? Bool == true)
        unsigned["sign_type"] = nil
        #expect(
            try await Self.official.run([
                ["op": "verify", "params": unsigned, "sign": sign, "public_key": Self.alipayPublicB64]
            ])
            .first as? Bool == true)
    }

    @Test(
        "tampering any field breaks all three implementations alike",
        .enabled(if: fzlee.isAvailable && official.isAvailable),
        arguments: ["total_amount", "out_trade_no", "trade_status", "app_id", "seller_id", "subject", "trade_no"])
    func tampering(field: String) async throws {
        var fields = try FormEncoding.parse(
            Array(try AlipayFixture.alipaySigner.notificationBody(Self.notification).utf8))
        fields[field] = fields[field]! + "1"
        let verifier = AlipayNotificationVerifier(credentials: AlipayFixture.credentials)
        #expect(throws: AlipayNotificationError.badSignature) {
            try verifier.verify(body: Array(FormEncoding.encode(fields).utf8))
        }
        let sign = fields.removeValue(forKey: "sign")!
        #expect(
            try await Self.fzlee.run([
                ["op": "verify", "params": fields, "sign": sign, "public_key": Self.alipayPublicPEM]
            ])
            .first as? Bool == false)
        fields["sign_type"] = nil
        #expect(
            try await Self.official.run([
                ["op": "verify", "params": fields, "sign": sign, "public_key": Self.alipayPublicB64]
            ])
            .first as? Bool == false)
    }

    @Test(
        "the sandbox's trade query answers an order's passback_params where Ant's own SDK reads it (AlipayTradeQueryResponse): what rebuilds an order the ledger lost",
        .enabled(if: official.isAvailable))
    func queryPassbackReadByAntsSDK() async throws {
        let sandbox = try AlipayFixture.sandbox()
        await sandbox.setNotificationSink { _, _ in true }
        let signer = AlipayRequestSigner(credentials: AlipayFixture.credentials)
        let order = AlipayAppPayOrder(
            outTradeNo: "OS-PB", amount: Money(amountMinor: 9900, currency: .cny), subject: "Gift box",
            notifyURL: "http://127.0.0.1:9/notify", passbackParams: "os1~gift_box~YWxpY2U")
        _ = try await sandbox.open(orderString: try signer.orderString(for: order, at: AlipayFixture.now))
        let parameters = try signer.signedParameters(
            method: "alipay.trade.query", bizContent: ["out_trade_no": "OS-PB"], at: AlipayFixture.now)
        let (status, body) = await sandbox.gateway(body: Array(FormEncoding.encode(parameters).utf8))
        #expect(status == 200)
        let member = try #require(try RawJSONMembers.extract(Array(body.utf8))["alipay_trade_query_response"])
        let read = try await Self.official.run([
            ["op": "parse_trade_query", "content": String(decoding: member, as: UTF8.self)]
        ])
        #expect(
            read.first as? [String: String] == [
                "out_trade_no": "OS-PB", "trade_status": "TRADE_SUCCESS", "passback_params": "os1~gift_box~YWxpY2U",
            ], "\(read)")
    }

    @Test(
        "query responses: signed by either SDK they verify under ours; ours verify under both",
        .enabled(if: fzlee.isAvailable && official.isAvailable))
    func queryResponses() async throws {
        let json =
            #"{"code":"10000","msg":"Success","trade_no":"2026112222001499","out_trade_no":"OS-1","trade_status":"TRADE_SUCCESS","total_amount":"199.00","buyer_logon_id":"158****1562"}"#
        // Alipay signs the raw *_response text; the official SDK's sign_with_rsa2 does the same over any content.
        let signed =
            try await Self.official.run([["op": "sign_raw", "content": json, "private_key": Self.alipayPrivateB64]])
            + (try await Self.fzlee.run([["op": "sign_raw", "content": json, "private_key": Self.alipayPrivatePEM]]))
        for sign in signed.compactMap({ $0 as? String }) {
            let body = #"{"alipay_trade_query_response":\#(json),"sign":"\#(sign)"}"#
            let response = try AlipayGatewayResponse.verified(
                body: Array(body.utf8), method: "alipay.trade.query", credentials: AlipayFixture.credentials)
            #expect(response.string("trade_status") == "TRADE_SUCCESS")
        }
        #expect(signed.count == 2)

        let ourSign = try AlipayFixture.alipaySigner.sign(json)
        #expect(
            try await Self.fzlee.run([
                ["op": "verify_raw", "content": json, "sign": ourSign, "public_key": Self.alipayPublicPEM]
            ])
            .first as? Bool == true)
        #expect(
            try await Self.official.run([
                ["op": "verify_raw", "content": json, "sign": ourSign, "public_key": Self.alipayPublicB64]
            ])
            .first as? Bool == true)
        let tampered = json.replacingOccurrences(of: "199.00", with: "1.00")
        #expect(
            try await Self.official.run([
                ["op": "verify_raw", "content": tampered, "sign": ourSign, "public_key": Self.alipayPublicB64]
            ])
            .first as? Bool == false)
    }
}
