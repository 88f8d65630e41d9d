import Foundation
import OrderSafeModel
import WeChatPay
import _CryptoExtras

/// WeChat Pay v3 notification handling (verify the raw bytes, decrypt the resource, type the transaction) against
/// the raw RSA-2048 verification it is built on, both measured here on one core.
enum WeChatPayBenchmark {
    struct Now: WallClock {
        func now() -> Date { Date(timeIntervalSince1970: 1_795_000_000) }
    }

    static func run() async throws -> Bool {
        let platformKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let side = WeChatPaySideSigner(platformKey: platformKey, serial: "PUB_KEY_ID_0112345678")
        let cipher = try APIv3Cipher(apiV3Key: "0123456789abcdef0123456789abcdef")
        let transaction =
            #"{"appid":"wx0123456789abcdef","mchid":"1900000001","out_trade_no":"OS20261118-WX01","transaction_id":"4200001234202611181234567890","trade_type":"APP","trade_state":"SUCCESS","trade_state_desc":"支付成功","bank_type":"OTHERS","attach":"","success_time":"2026-11-18T19:06:40+08:00","payer":{"openid":"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"},"amount":{"total":9900,"payer_total":9900,"currency":"CNY","payer_currency":"CNY"}}"#
        let body = try side.notificationBody(
            id: "EV-1", eventType: "TRANSACTION.SUCCESS", createTime: "2026-11-18T19:06:41+08:00",
            plaintext: transaction,
            cipher: cipher, nonce: "fdasflkja484")
        let headers = try side.headers(body: body, timestamp: 1_795_000_000, nonce: "5K8264ILTKCH16CQ2502SI8ZNMTM67VS")
        var keys = WeChatPayVerificationKeys()
        try keys.addPublicKey(id: side.serial, pem: platformKey.publicKey.pemRepresentation)
        let parser = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(keys: keys, clock: Now()), cipher: cipher)
        let bytes = Array(body.utf8)

        let raw = try await rawRSAVerifications(key: platformKey, length: bytes.count + 50)
        let notifications = try await operationsPerSecond {
            _ = try WeChatPayTransaction(resource: try await parser.parse(headers: headers, body: bytes).plaintext)
        }
        let verifier = SignedMessageVerifier(keys: keys, clock: Now())
        report(
            "  of which: signature check (headers + RSA)",
            try await operationsPerSecond { try await verifier.verify(headers: headers, body: bytes) })
        let plaintext = try await parser.parse(headers: headers, body: bytes).plaintext
        report(
            "  of which: transaction decoding",
            try await operationsPerSecond { _ = try WeChatPayTransaction(resource: plaintext) })
        return compare(
            "WeChat Pay v3", operation: "notification verify+decrypt+type", value: notifications, raw: raw,
            target: 20_000)
    }
}
