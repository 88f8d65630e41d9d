import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel
import _CryptoExtras

/// A merchant on the legacy API v2: app id, merchant id and the 32-character API key that keys every signature
/// (and, through its MD5, the encryption of refund notifications).
public struct V2Merchant: Sendable {
    public static let unifiedOrderURL = "https://api.mch.weixin.qq.com/pay/unifiedorder"

    public let appID: String
    public let merchantID: String
    let apiKey: String
    public let signType: V2Signature.Algorithm

    public init(appID: String, merchantID: String, apiKey: String, signType: V2Signature.Algorithm = .md5) {
        self.appID = appID
        self.merchantID = merchantID
        self.apiKey = apiKey
        self.signType = signType
    }

    /// The signed `unifiedorder` request for an APP payment (`total_fee` in fen; v2 is CNY only).
    public func unifiedOrderXML(
        outTradeNo: String, body: String, amount: Money, notifyURL: String, clientIP: String, nonce: String
    ) throws(WeChatPayError) -> String {
        guard amount.currency == .cny, amount.amountMinor > 0 else {
            throw .malformedNotification("v2 orders are in CNY with a positive total_fee, not \(amount)")
        }
        var fields = [
            "appid": appID, "mch_id": merchantID, "nonce_str": nonce, "body": body, "out_trade_no": outTradeNo,
            "total_fee": String(amount.amountMinor), "spbill_create_ip": clientIP, "notify_url": notifyURL,
            "trade_type": "APP",
        ]
        if signType == .hmacSHA256 { fields["sign_type"] = signType.rawValue }
        fields["sign"] = V2Signature.sign(fields, apiKey: apiKey, algorithm: signType)
        return V2XML.render(fields)
    }

    /// Calls `unifiedorder` and returns the checked `prepay_id`.
    public func unifiedOrder(
        outTradeNo: String, body: String, amount: Money, notifyURL: String, clientIP: String, nonce: String,
        url: String = unifiedOrderURL, transport: any ProviderTransport = HTTPClientProviderTransport(),
        timeout: Duration = .seconds(10)
    ) async throws -> String {
        let xml = try unifiedOrderXML(
            outTradeNo: outTradeNo, body: body, amount: amount, notifyURL: notifyURL, clientIP: clientIP, nonce: nonce)
        let response = try await transport.send(
            method: "POST", url: url, headers: ["Content-Type": "text/xml; charset=utf-8"], body: Array(xml.utf8),
            timeout: timeout)
        guard response.status == 200 else { throw WeChatPayAPIError.unavailable("HTTP \(response.status)") }
        return try prepayID(fromUnifiedOrderAnswer: response.body)
    }

    /// The `prepay_id` of a `unifiedorder` answer, after checking its codes and signature.
    public func prepayID(fromUnifiedOrderAnswer body: [UInt8]) throws(WeChatPayError) -> String {
        let fields = try verified(body)
        guard fields["result_code"] == "SUCCESS", let prepayID = fields["prepay_id"], !prepayID.isEmpty else {
            throw .malformedNotification(
                "unifiedorder failed: \(fields["err_code"] ?? "-") \(fields["err_code_des"] ?? "")")
        }
        return prepayID
    }

    /// The v2 parameters for the app's `PayReq` (signed over exactly these seven keys).
    public func appInvocation(prepayID: String, timestamp: Int64, nonce: String) -> WeChatPayInvocation {
        var parameters = [
            "appid": appID, "partnerid": merchantID, "prepayid": prepayID, "package": "Sign=WXPay", "noncestr": nonce,
            "timestamp": String(timestamp),
        ]
        parameters["sign"] = V2Signature.sign(parameters, apiKey: apiKey, algorithm: signType)
        return WeChatPayInvocation(parameters)
    }

    /// Verifies a v2 payment notification (`return_code`, signature with its own `sign_type`, our app and merchant).
    public func paymentNotification(_ body: [UInt8]) throws(WeChatPayError) -> V2PaymentNotification {
        let fields = try verified(body)
        guard fields["appid"] == appID, fields["mch_id"] == merchantID else {
            throw .malformedNotification(
                "the notification is for app \(fields["appid"] ?? "-") / merchant \(fields["mch_id"] ?? "-")")
        }
        return try V2PaymentNotification(fields)
    }

    /// Decrypts a v2 refund notification's `req_info` (AES-256-ECB keyed with the lowercase hex MD5 of the API key).
    public func refundNotification(_ body: [UInt8]) throws(WeChatPayError) -> [String: String] {
        let outer = try Self.fields(body)
        guard outer["return_code"] == "SUCCESS" else {
            throw .malformedNotification("return_code is \(outer["return_code"] ?? "missing")")
        }
        guard outer["mch_id"] == merchantID else {
            throw .malformedNotification("the refund is for merchant \(outer["mch_id"] ?? "-")")
        }
        guard let info = outer["req_info"], let ciphertext = Data(base64Encoded: info) else {
            throw .malformedNotification("req_info is missing or not base64")
        }
        let plaintext = try V2RefundCipher(apiKey: apiKey).decrypt(Array(ciphertext))
        do {
            return try V2XML.parse(plaintext, root: "root")
        } catch {
            throw .malformedNotification("req_info: \(error)")
        }
    }

    /// The reply WeChat Pay expects to a v2 notification.
    public static func reply(success: Bool, message: String = "OK") -> String {
        V2XML.render(["return_code": success ? "SUCCESS" : "FAIL", "return_msg": message])
    }

    private func verified(_ body: [UInt8]) throws(WeChatPayError) -> [String: String] {
        let fields = try Self.fields(body)
        guard fields["return_code"] == "SUCCESS" else {
            throw .malformedNotification(
                "return_code is \(fields["return_code"] ?? "missing"): \(fields["return_msg"] ?? "")")
        }
        guard let sign = fields["sign"] else { throw .badSignature }
        var algorithm = V2Signature.Algorithm.md5
        if let type = fields["sign_type"] {
            guard let named = V2Signature.Algorithm(rawValue: type) else { throw .unsupportedAlgorithm(type) }
            algorithm = named
        }
        guard V2Signature.isValid(sign, for: fields, apiKey: apiKey, algorithm: algorithm) else { throw .badSignature }
        return fields
    }

    private static func fields(_ body: [UInt8]) throws(WeChatPayError) -> [String: String] {
        do {
            return try V2XML.parse(body)
        } catch {
            throw .malformedNotification("\(error)")
        }
    }
}

/// A verified v2 payment notification.
public struct V2PaymentNotification: Sendable, Hashable {
    public var outTradeNo: String
    public var transactionID: String
    /// `result_code == SUCCESS`: the buyer paid.
    public var isPaid: Bool
    public var amount: Money
    public var timeEnd: String?

    init(_ fields: [String: String]) throws(WeChatPayError) {
        guard let outTradeNo = fields["out_trade_no"], let transactionID = fields["transaction_id"],
            let fee = fields["total_fee"].flatMap({ Int64($0) }), fee > 0
        else {
            throw .malformedNotification(
                "a v2 notification needs out_trade_no, transaction_id and a positive total_fee")
        }
        guard let currency = CurrencyCode(fields["fee_type"] ?? "CNY") else {
            throw .malformedNotification("bad fee_type")
        }
        self.outTradeNo = outTradeNo
        self.transactionID = transactionID
        isPaid = fields["result_code"] == "SUCCESS"
        amount = Money(amountMinor: fee, currency: currency)
        timeEnd = fields["time_end"]
    }
}

/// AES-256-ECB with PKCS#7 padding, keyed with the lowercase hex MD5 of the v2 API key: `req_info` of refund
/// notifications. (ECB authenticates nothing: a refund notification is a hint to query, never proof.)
struct V2RefundCipher {
    let key: SymmetricKey

    init(apiKey: String) {
        let hex = Insecure.MD5.hash(data: Data(apiKey.utf8)).map { String(format: "%02x", $0) }.joined()
        key = SymmetricKey(data: Data(hex.utf8))
    }

    func decrypt(_ ciphertext: [UInt8]) throws(WeChatPayError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw .decryptionFailed }
        var plaintext = ciphertext
        do {
            for start in stride(from: 0, to: plaintext.count, by: 16) {
                try AES.inversePermute(&plaintext[start..<start + 16], key: key)
            }
        } catch {
            throw .decryptionFailed
        }
        guard let pad = plaintext.last, (1...16).contains(pad), plaintext.suffix(Int(pad)).allSatisfy({ $0 == pad })
        else {
            throw .decryptionFailed
        }
        return Array(plaintext.dropLast(Int(pad)))
    }

    /// For the sandbox and tests: what WeChat Pay does.
    func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        let pad = 16 - plaintext.count % 16
        var blocks = plaintext + Array(repeating: UInt8(pad), count: pad)
        for start in stride(from: 0, to: blocks.count, by: 16) {
            try AES.permute(&blocks[start..<start + 16], key: key)
        }
        return blocks
    }
}
