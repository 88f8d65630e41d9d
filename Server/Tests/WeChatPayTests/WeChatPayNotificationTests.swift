import ChannelSupport
import Foundation
import OrderSafeModel
import Testing
import _CryptoExtras

@testable import WeChatPay

@Suite("WeChat Pay v3 notifications: typed, checked, and hostile input")
struct WeChatPayNotificationTests {
    static let platformKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let apiV3Key = "0123456789abcdef0123456789abcdef"
    static let now: Int64 = 1_795_000_000
    static let side = WeChatPaySideSigner(platformKey: platformKey, serial: "PUB_KEY_ID_0112345678")
    static let transaction =
        #"{"appid":"wx0123456789abcdef","mchid":"1900000001","out_trade_no":"OS20261118-WX01","transaction_id":"4200001234202611181234567890","trade_type":"APP","trade_state":"SUCCESS","trade_state_desc":"支付成功","bank_type":"OTHERS","attach":"","success_time":"2026-11-18T19:06:40+08:00","payer":{"openid":"oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"},"amount":{"total":9900,"payer_total":9900,"currency":"CNY","payer_currency":"CNY"}}"#

    static func parser(now: Int64 = now, key: String = apiV3Key) throws -> WeChatPayNotificationParser {
        var keys = WeChatPayVerificationKeys()
        try keys.addPublicKey(id: side.serial, pem: platformKey.publicKey.pemRepresentation)
        return WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(
                keys: keys, clock: FixedClock(date: Date(timeIntervalSince1970: Double(now)))),
            cipher: try APIv3Cipher(apiV3Key: key))
    }

    static func signed(_ plaintext: String = transaction, timestamp: Int64 = now) throws -> ([String: String], String) {
        let body = try side.notificationBody(
            id: "EV-1", eventType: "TRANSACTION.SUCCESS", createTime: "2026-11-18T19:06:41+08:00", plaintext: plaintext,
            cipher: try APIv3Cipher(apiV3Key: apiV3Key), nonce: "fdasflkja484")
        return (try side.headers(body: body, timestamp: timestamp, nonce: "5K8264ILTKCH16CQ2502SI8ZNMTM67VS"), body)
    }

    @Test("a signed, encrypted TRANSACTION.SUCCESS decodes to a typed transaction that matches the order")
    func transactionSuccess() async throws {
        let (headers, body) = try Self.signed()
        let notification = try await Self.parser().parse(headers: headers, body: Array(body.utf8))
        #expect(notification.eventType == "TRANSACTION.SUCCESS")
        let transaction = try WeChatPayTransaction(resource: notification.plaintext)
        #expect(transaction.tradeState == .success && transaction.tradeState.isPaid)
        #expect(transaction.amount == Money(amountMinor: 9900, currency: .cny))
        try transaction.check(
            appID: "wx0123456789abcdef", merchantID: "1900000001", outTradeNo: "OS20261118-WX01",
            amount: Money(amountMinor: 9900, currency: .cny))
        #expect(
            throws: WeChatPayMismatch.amountMismatch(
                expected: Money(amountMinor: 9901, currency: .cny),
                got: Money(amountMinor: 9900, currency: .cny))
        ) {
            try transaction.check(
                appID: "wx0123456789abcdef", merchantID: "1900000001", outTradeNo: "OS20261118-WX01",
                amount: Money(amountMinor: 9901, currency: .cny))
        }
        #expect(throws: WeChatPayMismatch.wrongMerchant("1900000001")) {
            try transaction.check(
                appID: "wx0123456789abcdef", merchantID: "1900000002", outTradeNo: "OS20261118-WX01",
                amount: transaction.amount)
        }
    }

    @Test("the skew check follows the injected clock: within 5 minutes either way passes, beyond fails")
    func skew() async throws {
        let (headers, body) = try Self.signed()
        _ = try await Self.parser(now: Self.now + 300).parse(headers: headers, body: Array(body.utf8))
        _ = try await Self.parser(now: Self.now - 300).parse(headers: headers, body: Array(body.utf8))
        await #expect(throws: WeChatPayError.staleTimestamp(seconds: Self.now, now: Self.now + 301)) {
            try await Self.parser(now: Self.now + 301).parse(headers: headers, body: Array(body.utf8))
        }
    }

    @Test("wrong APIv3 key, altered body, truncated ciphertext, unknown serial, bad JSON are each typed errors")
    func hostile() async throws {
        let (headers, body) = try Self.signed()
        await #expect(throws: WeChatPayError.decryptionFailed) {
            try await Self.parser(key: "ffffffffffffffffffffffffffffffff").parse(
                headers: headers, body: Array(body.utf8))
        }
        await #expect(throws: WeChatPayError.badSignature) {
            try await Self.parser().parse(
                headers: headers, body: Array(body.replacingOccurrences(of: "EV-1", with: "EV-2").utf8))
        }
        var wrongSerial = headers
        wrongSerial["Wechatpay-Serial"] = "MERCHANT_CERT_SERIAL"
        await #expect(throws: WeChatPayError.unknownSerial("MERCHANT_CERT_SERIAL")) {
            try await Self.parser().parse(headers: wrongSerial, body: Array(body.utf8))
        }
        var otherType = headers
        otherType["Wechatpay-Signature-Type"] = "WECHATPAY2-SM2-WITH-SM3"
        await #expect(throws: WeChatPayError.unsupportedAlgorithm("WECHATPAY2-SM2-WITH-SM3")) {
            try await Self.parser().parse(headers: otherType, body: Array(body.utf8))
        }
        // A truncated ciphertext, re-signed so that only the decryption can catch it.
        var envelope = try JSONSerialization.jsonObject(with: Data(body.utf8)) as! [String: Any]
        var resource = envelope["resource"] as! [String: String]
        resource["ciphertext"] = String(resource["ciphertext"]!.dropLast(8))
        envelope["resource"] = resource
        let truncated = String(decoding: try JSONSerialization.data(withJSONObject: envelope), as: UTF8.self)
        await #expect(throws: WeChatPayError.decryptionFailed) {
            try await Self.parser().parse(
                headers: try Self.side.headers(body: truncated, timestamp: Self.now, nonce: "n"),
                body: Array(truncated.utf8))
        }
        resource["associated_data"] = "refund"
        envelope["resource"] = resource
        let otherAAD = String(decoding: try JSONSerialization.data(withJSONObject: envelope), as: UTF8.self)
        await #expect(throws: WeChatPayError.decryptionFailed) {
            try await Self.parser().parse(
                headers: try Self.side.headers(body: otherAAD, timestamp: Self.now, nonce: "n"),
                body: Array(otherAAD.utf8))
        }
        let garbage = "not json"
        await #expect(
            throws: WeChatPayError.malformedNotification(
                "the body is not a v3 notification envelope (not a JSON object (notAnObject))")
        ) {
            try await Self.parser().parse(
                headers: try Self.side.headers(body: garbage, timestamp: Self.now, nonce: "n"),
                body: Array(garbage.utf8))
        }
        let (badHeaders, badBody) = try Self.signed(
            #"{"appid":"wx","mchid":"1","out_trade_no":"x","trade_state":"PAID","amount":{"total":1}}"#)
        let notification = try await Self.parser().parse(headers: badHeaders, body: Array(badBody.utf8))
        #expect(throws: WeChatPayError.self) { try WeChatPayTransaction(resource: notification.plaintext) }
    }

    @Test("refund resources decode with their status and amounts")
    func refund() throws {
        let json =
            #"{"mchid":"1900000001","out_trade_no":"OS20261118-WX01","transaction_id":"4200001234","out_refund_no":"RF-1","refund_id":"50000000382019052709732678859","refund_status":"SUCCESS","success_time":"2026-11-18T20:00:00+08:00","user_received_account":"招商银行信用卡0403","amount":{"total":9900,"refund":900,"payer_total":9900,"payer_refund":900}}"#
        let refund = try WeChatPayRefund(resource: Array(json.utf8))
        #expect(
            refund.status == .success && refund.refundFen == 900 && refund.totalFen == 9900
                && refund.outRefundNo == "RF-1")
    }

    @Test("app invoke parameters are signed over appid, timestamp, nonce and prepay_id")
    func appInvocation() throws {
        let merchantKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = try MerchantSigner(
            merchantID: "1900000001", certificateSerial: "SERIAL", privateKey: merchantKey.pemRepresentation)
        let parameters = try signer.appInvocation(
            appID: "wx0123456789abcdef", prepayID: "wx18190640123", timestamp: 1_795_000_000, nonce: "abc")
        #expect(parameters["package"] == "Sign=WXPay" && parameters["partnerid"] == "1900000001")
        #expect(
            SHA256WithRSA.verify(
                parameters["sign"]!, over: Array("wx0123456789abcdef\n1795000000\nabc\nwx18190640123\n".utf8),
                with: merchantKey.publicKey))
    }
}
