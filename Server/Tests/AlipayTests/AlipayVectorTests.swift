import Foundation
import Testing

@testable import Alipay

/// Vectors A1–A5 of `../shared/vectors/CNPAY-VECTORS.md`.
@Suite("Alipay vectors", .enabled(if: Vectors.available))
struct AlipayVectorTests {
    /// Certificate mode with the vector's keys: app secret, app certificate, Alipay certificate and root.
    static func credentials() throws -> AlipayCredentials {
        try AlipayCredentials(
            appID: "9021000122682882", appPrivateKey: try Vectors.text("alipay/alipayAppSecret.txt"),
            appCertificate: try Vectors.text("alipay/alipayAppPublicCert.crt"),
            alipayCertificate: try Vectors.text("alipay/alipayPublicCert.crt"),
            alipayRootCertificate: try Vectors.text("alipay/alipayRootCert.crt"))
    }

    @Test("A1: request sign content and RSA2 signature")
    func requestSigning() throws {
        let vector = try Vectors.json("alipay/request_sign_vector.json")
        let params = vector["params"] as! [String: String]
        let content = SignContent.make(params, excluding: SignContent.requestExclusions)
        #expect(content == vector["expected_sign_content"] as? String)
        #expect(try Self.credentials().sign(content) == vector["expected_sign"] as? String)
    }

    @Test("A2: the real sandbox-signed notification verifies without sign_type, and fails with it")
    func notification() throws {
        let fields = try Vectors.json("alipay/notify_trade_success.json") as! [String: String]
        let credentials = try Self.credentials()
        let body = Array(FormEncoding.encode(fields).utf8)
        let notification = try AlipayNotificationVerifier(credentials: credentials).verify(body: body)
        #expect(notification.tradeStatus == .tradeSuccess)
        #expect(notification.totalAmount.amountMinor == 1)
        #expect(notification.outTradeNo == "1703147160")
        #expect(notification.tradeNo == "2023122122001499160501589436")
        #expect(notification.subject == "yansongda+测试 - 1")
        let withSignType = SignContent.make(fields, excluding: ["sign"])
        #expect(!credentials.isAlipaySignature(fields["sign"]!, over: Array(withSignType.utf8)))
    }

    @Test("A2: a '+' in the form body is a space, so the literal '+' of the subject must arrive as %2B")
    func plusIsSpace() throws {
        var fields = try Vectors.json("alipay/notify_trade_success.json") as! [String: String]
        let sign = fields.removeValue(forKey: "sign")!
        let body =
            FormEncoding.encode(fields).replacingOccurrences(of: "%2B", with: "+") + "&sign="
            + FormEncoding.escape(sign)
        #expect(throws: AlipayNotificationError.badSignature) {
            try AlipayNotificationVerifier(credentials: try Self.credentials()).verify(body: Array(body.utf8))
        }
    }

    @Test("A3: the return URL query string verifies after URL-decoding")
    func returnURL() throws {
        let vector = try Vectors.json("alipay/return_url_vector.json")
        let query = vector["query_string"] as! String
        let fields = try AlipayNotificationVerifier(credentials: try Self.credentials()).verifiedFields(
            body: Array(query.utf8))
        #expect(fields["timestamp"] == "2023-12-21 14:48:44")
        #expect(fields["out_trade_no"] == "1703141270")
    }

    @Test("A4: a sync response verifies over the raw *_response text; a tampered sign or re-spaced body fails")
    func syncResponse() throws {
        let vector = try Vectors.json("alipay/sync_response_vector.json")
        let content = vector["signed_content"] as! String
        let sign = vector["sign"] as! String
        let credentials = try Self.credentials()
        let method = "alipay.fund.trans.uni.transfer"
        func body(_ content: String, _ sign: String) -> [UInt8] {
            Array(#"{"alipay_fund_trans_uni_transfer_response":\#(content),"sign":"\#(sign)"}"#.utf8)
        }
        let response = try AlipayGatewayResponse.verified(
            body: body(content, sign), method: method, credentials: credentials)
        #expect(response.isSuccess)
        #expect(response.string("trans_amount") == "0.01")
        #expect(throws: AlipayGatewayError.badSignature) {
            try AlipayGatewayResponse.verified(
                body: body(content, "A" + sign), method: method, credentials: credentials)
        }
        let respaced = content.replacingOccurrences(of: "\":\"", with: "\": \"")
        #expect(throws: AlipayGatewayError.badSignature) {
            try AlipayGatewayResponse.verified(body: body(respaced, sign), method: method, credentials: credentials)
        }
    }

    @Test("A5: certificate-mode serial numbers")
    func certificateSerials() throws {
        let serials = try #require(try Self.credentials().certificateSerials)
        #expect(serials.appCertSN == "e90dd23a37c5c7b616e003970817ff82")
        #expect(serials.alipayRootCertSN == "687b59193f3f462dd5336e5abf83c5d8_02941eef3187dddf3d3b83462e1dfcf6")
    }

    @Test("the app's own public key configured as the Alipay key is named as the mistake it is")
    func swappedKeys() throws {
        let secret = try Vectors.text("alipay/alipayAppSecret.txt")
        let appCertificate = try Vectors.text("alipay/alipayAppPublicCert.crt")
        #expect(throws: AlipayKeyError.appPublicKeyConfiguredAsAlipayKey) {
            try AlipayCredentials(
                appID: "x", appPrivateKey: secret, appCertificate: appCertificate, alipayCertificate: appCertificate,
                alipayRootCertificate: try Vectors.text("alipay/alipayRootCert.crt"))
        }
    }
}
