import Foundation
import OrderSafeModel
import Testing

@testable import WeChatPay

@Suite("WeChat Pay legacy v2: safe XML, unifiedorder, app parameters, notifications, refund req_info")
struct WeChatPayV2Tests {
    static let merchant = V2Merchant(
        appID: "wxd930ea5d5a258f4f", merchantID: "10000100", apiKey: "192006250b4c09247ec02edce69f6a2d")

    /// What WeChat Pay would send: `fields` signed with the API key.
    static func signedXML(_ fields: [String: String], algorithm: V2Signature.Algorithm = .md5) -> [UInt8] {
        var fields = fields
        if algorithm == .hmacSHA256 { fields["sign_type"] = "HMAC-SHA256" }
        fields["sign"] = V2Signature.sign(fields, apiKey: "192006250b4c09247ec02edce69f6a2d", algorithm: algorithm)
        return Array(V2XML.render(fields).utf8)
    }

    static let paid = [
        "return_code": "SUCCESS", "result_code": "SUCCESS", "appid": "wxd930ea5d5a258f4f", "mch_id": "10000100",
        "nonce_str": "5d2b6c2a8db53831f7eda20af46e531c", "out_trade_no": "OS20261122-V2A",
        "transaction_id": "1004400740201409030005092168",
        "total_fee": "9900", "fee_type": "CNY", "trade_type": "APP", "time_end": "20261122141500",
        "openid": "oUpF8uMEb4qRXf22hE3X68TekukE",
    ]

    @Test("the XML reader takes CDATA and plain values and refuses DTDs, entities, nesting, duplicates and huge bodies")
    func xml() throws {
        let fields = try V2XML.parse(
            Array("<?xml version=\"1.0\"?>\n<xml><a><![CDATA[x&y<z>]]></a><b>1 &lt; 2 &#x4E2D;</b></xml>".utf8))
        #expect(fields == ["a": "x&y<z>", "b": "1 < 2 中"])
        #expect(try V2XML.parse(Array(V2XML.render(["k": "a]]>b"]).utf8)) == ["k": "a]]>b"])
        let xxe =
            #"<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><xml><a>&xxe;</a></xml>"#
        #expect(throws: V2XML.Error.forbidden("DTD or entity declaration")) { try V2XML.parse(Array(xxe.utf8)) }
        #expect(throws: V2XML.Error.forbidden("entity '&xxe;'")) {
            try V2XML.parse(Array("<xml><a>&xxe;</a></xml>".utf8))
        }
        #expect(throws: V2XML.Error.forbidden("nested element in <a>")) {
            try V2XML.parse(Array("<xml><a><b>1</b></a></xml>".utf8))
        }
        #expect(throws: V2XML.Error.malformed("duplicate <a>")) {
            try V2XML.parse(Array("<xml><a>1</a><a>2</a></xml>".utf8))
        }
        #expect(throws: V2XML.Error.tooLarge(V2XML.maxBytes + 1)) {
            try V2XML.parse(Array(repeating: 0x20, count: V2XML.maxBytes + 1))
        }
        #expect(throws: V2XML.Error.self) { try V2XML.parse(Array("<xml><a>1</a>".utf8)) }
        #expect(throws: V2XML.Error.self) { try V2XML.parse(Array("<html></html>".utf8)) }
        #expect(throws: V2XML.Error.self) { try V2XML.parse([0xFF, 0xFE]) }
    }

    @Test("unifiedorder is signed; its answer is checked; app parameters are signed over the seven keys")
    func unifiedOrder() throws {
        let xml = try Self.merchant.unifiedOrderXML(
            outTradeNo: "OS20261122-V2A", body: "Gift box", amount: Money(amountMinor: 9900, currency: .cny),
            notifyURL: "https://merchant.example/v1/notify/wechatpay/v2", clientIP: "127.0.0.1",
            nonce: "ibuaiVcKdpRxkhJA")
        let fields = try V2XML.parse(Array(xml.utf8))
        #expect(fields["trade_type"] == "APP" && fields["total_fee"] == "9900")
        #expect(
            V2Signature.isValid(
                fields["sign"]!, for: fields, apiKey: "192006250b4c09247ec02edce69f6a2d", algorithm: .md5))
        #expect(throws: WeChatPayError.self) {
            try Self.merchant.unifiedOrderXML(
                outTradeNo: "x", body: "b", amount: Money(amountMinor: 100, currency: .usd),
                notifyURL: "u", clientIP: "127.0.0.1", nonce: "n")
        }
        let answer = Self.signedXML([
            "return_code": "SUCCESS", "result_code": "SUCCESS", "appid": "wxd930ea5d5a258f4f", "mch_id": "10000100",
            "nonce_str": "IITRi8Iabbblz1Jc", "prepay_id": "wx201411101639507cbf6ffd8b0779950874", "trade_type": "APP",
        ])
        #expect(try Self.merchant.prepayID(fromUnifiedOrderAnswer: answer) == "wx201411101639507cbf6ffd8b0779950874")
        var tampered = answer
        tampered[tampered.count - 20] ^= 1
        #expect(throws: WeChatPayError.self) { try Self.merchant.prepayID(fromUnifiedOrderAnswer: tampered) }

        let invocation = Self.merchant.appInvocation(
            prepayID: "wx201411101639507cbf6ffd8b0779950874", timestamp: 1_795_000_000, nonce: "n0")
        let signed = [
            "appid": invocation.appid, "partnerid": invocation.partnerid, "prepayid": invocation.prepayid,
            "package": invocation.package, "noncestr": invocation.noncestr, "timestamp": invocation.timestamp,
        ]
        #expect(
            invocation.sign == V2Signature.sign(signed, apiKey: "192006250b4c09247ec02edce69f6a2d", algorithm: .md5))
    }

    @Test(
        "payment notifications verify with MD5 or HMAC-SHA256; forgeries, other merchants and bad sign types are refused"
    )
    func notification() throws {
        for algorithm in [V2Signature.Algorithm.md5, .hmacSHA256] {
            let notification = try Self.merchant.paymentNotification(Self.signedXML(Self.paid, algorithm: algorithm))
            #expect(notification.isPaid && notification.amount == Money(amountMinor: 9900, currency: .cny))
            #expect(notification.transactionID == "1004400740201409030005092168")
        }
        var forged = Self.paid
        forged["sign"] = V2Signature.sign(Self.paid, apiKey: "another-key", algorithm: .md5)
        #expect(throws: WeChatPayError.badSignature) {
            try Self.merchant.paymentNotification(Array(V2XML.render(forged).utf8))
        }
        var otherMerchant = Self.paid
        otherMerchant["mch_id"] = "10000999"
        #expect(throws: WeChatPayError.self) { try Self.merchant.paymentNotification(Self.signedXML(otherMerchant)) }
        var sm3 = Self.paid
        sm3["sign_type"] = "SM3"
        sm3["sign"] = "00"
        #expect(throws: WeChatPayError.unsupportedAlgorithm("SM3")) {
            try Self.merchant.paymentNotification(Array(V2XML.render(sm3).utf8))
        }
        #expect(
            V2Merchant.reply(success: true)
                == "<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>")
    }

    @Test("refund req_info: AES-256-ECB keyed with MD5 of the API key, padded; a wrong key or truncation fails")
    func refund() throws {
        let inner =
            "<root><out_refund_no><![CDATA[RF-1]]></out_refund_no><refund_fee><![CDATA[900]]></refund_fee><refund_status><![CDATA[SUCCESS]]></refund_status></root>"
        let cipher = V2RefundCipher(apiKey: "192006250b4c09247ec02edce69f6a2d")
        let encrypted = try cipher.encrypt(Array(inner.utf8))
        let body = Array(
            V2XML.render([
                "return_code": "SUCCESS", "appid": "wxd930ea5d5a258f4f", "mch_id": "10000100", "nonce_str": "n",
                "req_info": Data(encrypted).base64EncodedString(),
            ]).utf8)
        let fields = try Self.merchant.refundNotification(body)
        #expect(fields["out_refund_no"] == "RF-1" && fields["refund_fee"] == "900")
        #expect(throws: WeChatPayError.decryptionFailed) {
            try V2RefundCipher(apiKey: "another-key").decrypt(encrypted)
        }
        #expect(throws: WeChatPayError.decryptionFailed) { try cipher.decrypt(Array(encrypted.dropLast(3))) }
    }
}
