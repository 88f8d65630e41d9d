import Foundation
import OracleSupport
import OrderSafeModel
import Testing
import _CryptoExtras

@testable import WeChatPay

/// Interoperability with `wechatpayv3` (PyPI), installed by `scripts/oracles/setup`.
enum WeChatPayOracle {
    static let wechatpayv3 = Oracle(name: "wechatpayv3", script: "wechatpayv3_oracle.py")
}

@Suite("WeChat Pay interoperability with wechatpayv3", .enabled(if: WeChatPayOracle.wechatpayv3.isAvailable))
struct WeChatPayInteropTests {
    static let oracle = WeChatPayOracle.wechatpayv3
    static let merchantKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let platformKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let publicKeyID = "PUB_KEY_ID_0119000000012026112200000001"
    static let apiV3Key = "0123456789abcdef0123456789abcdef"
    static let transaction =
        #"{"appid":"wx0123456789abcdef","mchid":"1900000001","out_trade_no":"OS20261122-PY0001","transaction_id":"4200002026112200000001","trade_type":"APP","trade_state":"SUCCESS","trade_state_desc":"支付成功","success_time":"2026-11-22T14:00:00+08:00","amount":{"total":600,"currency":"CNY"}}"#

    static var merchant: MerchantSigner {
        try! MerchantSigner(
            merchantID: "1900000001", certificateSerial: "MERCHANTSERIAL",
            privateKey: merchantKey.pkcs8PEMRepresentation)
    }

    func parser(now: Int64) throws -> WeChatPayNotificationParser {
        var keys = WeChatPayVerificationKeys()
        try keys.addPublicKey(id: Self.publicKeyID, pem: Self.platformKey.publicKey.pemRepresentation)
        return WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(
                keys: keys, clock: FixedClock(date: Date(timeIntervalSince1970: Double(now)))),
            cipher: try APIv3Cipher(apiV3Key: Self.apiV3Key))
    }

    func theirVerdict(_ headers: [String: String], _ body: String) async throws -> String? {
        try await Self.oracle.run([
            [
                "op": "decrypt_callback", "headers": headers, "body": body,
                "public_key": Self.platformKey.publicKey.pemRepresentation,
                "public_key_id": Self.publicKeyID, "apiv3_key": Self.apiV3Key,
                "private_key": Self.merchantKey.pkcs8PEMRepresentation,
            ]
        ])[0] as? String
    }

    @Test("our Authorization signatures equal theirs for the same request, and our app parameters' sign equals theirs")
    func signatures() async throws {
        let requests: [(String, String, String)] = [
            ("GET", "/v3/pay/transactions/out-trade-no/OS20261122-PY0001?mchid=1900000001", ""),
            (
                "POST", "/v3/pay/transactions/app",
                #"{"appid":"wx0123456789abcdef","description":"礼盒","amount":{"total":600}}"#
            ),
        ]
        for (method, path, body) in requests {
            let theirs =
                try await Self.oracle.run([
                    [
                        "op": "authorization", "method": method, "path": path, "body": body, "nonce": "A1B2C3D4E5F6G7",
                        "mchid": "1900000001", "serial_no": "MERCHANTSERIAL",
                        "private_key": Self.merchantKey.pkcs8PEMRepresentation,
                    ]
                ])[0] as! [String: Any]
            let header = theirs["header"] as! String
            let ours = try Self.merchant.authorization(
                method: method, pathAndQuery: path, timestamp: Int64(theirs["timestamp"] as! Int),
                nonce: "A1B2C3D4E5F6G7", body: body)
            func signature(_ header: String) -> String {
                String(header.split(separator: "signature=\"")[1].prefix { $0 != "\"" })
            }
            #expect(signature(ours) == signature(header))
        }
        let invocation = try Self.merchant.appInvocation(
            appID: "wx0123456789abcdef", prepayID: "wx22140000123", timestamp: 1_795_000_000, nonce: "n0nce")
        let theirSign =
            try await Self.oracle.run([
                [
                    "op": "app_sign", "appid": "wx0123456789abcdef", "timestamp": "1795000000", "noncestr": "n0nce",
                    "prepayid": "wx22140000123",
                    "private_key": Self.merchantKey.pkcs8PEMRepresentation,
                ]
            ])[0] as! String
        #expect(invocation["sign"] == theirSign)
    }

    @Test("notifications we sign they accept, notifications they build we accept, tampered ones both refuse")
    func notifications() async throws {
        let now: Int64 = 1_795_000_000
        // Ours → theirs.
        let side = WeChatPaySideSigner(platformKey: Self.platformKey, serial: Self.publicKeyID)
        let body = try side.notificationBody(
            id: "EV-1", eventType: "TRANSACTION.SUCCESS", createTime: "2026-11-22T14:00:00+08:00",
            plaintext: Self.transaction,
            cipher: try APIv3Cipher(apiV3Key: Self.apiV3Key), nonce: "fdasflkja484")
        let headers = try side.headers(body: body, timestamp: now, nonce: "5K8264ILTKCH16CQ2502SI8ZNMTM67VS")
        #expect(try await theirVerdict(headers, body) == Self.transaction)
        #expect(
            try await parser(now: now).parse(headers: headers, body: Array(body.utf8)).plaintext
                == Array(Self.transaction.utf8))

        // Theirs → ours.
        let made =
            try await Self.oracle.run([
                [
                    "op": "make_notification", "resource": Self.transaction, "timestamp": now, "nonce": "PYNONCE",
                    "serial": Self.publicKeyID,
                    "platform_private_key": Self.platformKey.pkcs8PEMRepresentation, "apiv3_key": Self.apiV3Key,
                ]
            ])[0] as! [String: Any]
        let theirHeaders = made["headers"] as! [String: String]
        let theirBody = made["body"] as! String
        #expect(try await theirVerdict(theirHeaders, theirBody) == Self.transaction)
        let parsed = try await parser(now: now).parse(headers: theirHeaders, body: Array(theirBody.utf8))
        #expect(try WeChatPayTransaction(resource: parsed.plaintext).outTradeNo == "OS20261122-PY0001")

        // Tampered: both refuse.
        let tampered = theirBody.replacingOccurrences(of: "EV-ORACLE", with: "EV-FORGED")
        #expect(try await theirVerdict(theirHeaders, tampered) == nil)
        await #expect(throws: WeChatPayError.badSignature) {
            try await parser(now: now).parse(headers: theirHeaders, body: Array(tampered.utf8))
        }
    }

    @Test("a replayed notification an hour old: wechatpayv3 accepts it, we refuse it as stale")
    func staleTimestamp() async throws {
        let now: Int64 = 1_795_000_000
        let made =
            try await Self.oracle.run([
                [
                    "op": "make_notification", "resource": Self.transaction, "timestamp": now - 3600,
                    "nonce": "OLDNONCE", "serial": Self.publicKeyID,
                    "platform_private_key": Self.platformKey.pkcs8PEMRepresentation, "apiv3_key": Self.apiV3Key,
                ]
            ])[0] as! [String: Any]
        let headers = made["headers"] as! [String: String]
        let body = made["body"] as! String
        #expect(try await theirVerdict(headers, body) == Self.transaction)
        await #expect(throws: WeChatPayError.staleTimestamp(seconds: now - 3600, now: now)) {
            try await parser(now: now).parse(headers: headers, body: Array(body.utf8))
        }
    }
}
