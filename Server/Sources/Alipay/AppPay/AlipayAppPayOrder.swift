import Foundation
import OrderSafeModel

/// What the server signs for `alipay.trade.app.pay`: the order string the app hands to the Alipay SDK.
public struct AlipayAppPayOrder: Sendable, Hashable {
    public var outTradeNo: String
    public var amount: Money
    public var subject: String
    public var notifyURL: String
    /// When the unpaid order expires at Alipay.
    public var expiresAt: Date?
    /// Echoed back in the notification (URL-encoded by Alipay).
    public var passbackParams: String?

    public init(
        outTradeNo: String, amount: Money, subject: String, notifyURL: String, expiresAt: Date? = nil,
        passbackParams: String? = nil
    ) {
        self.outTradeNo = outTradeNo
        self.amount = amount
        self.subject = subject
        self.notifyURL = notifyURL
        self.expiresAt = expiresAt
        self.passbackParams = passbackParams
    }
}

/// Builds signed request parameters: the common parameters, `biz_content`, and the RSA2 `sign`.
public struct AlipayRequestSigner: Sendable {
    let credentials: AlipayCredentials

    public init(credentials: AlipayCredentials) {
        self.credentials = credentials
    }

    /// The app-payment order string: signed parameters, URL-encoded, ready for the Alipay SDK's `payOrder`.
    public func orderString(for order: AlipayAppPayOrder, at date: Date) throws -> String {
        var biz: [String: String] = [
            "out_trade_no": order.outTradeNo,
            "total_amount": try AlipayAmount.string(order.amount),
            "subject": order.subject,
            "product_code": "QUICK_MSECURITY_PAY",
        ]
        biz["time_expire"] = order.expiresAt.map(BeijingTime.string)
        biz["passback_params"] = order.passbackParams
        let parameters = try signedParameters(
            method: "alipay.trade.app.pay", bizContent: biz, extra: ["notify_url": order.notifyURL], at: date)
        return FormEncoding.encode(parameters)
    }

    /// Every parameter of a gateway request, `sign` included.
    public func signedParameters(
        method: String, bizContent: [String: String], extra: [String: String] = [:], at date: Date
    )
        throws -> [String: String]
    {
        var parameters = extra
        parameters["app_id"] = credentials.appID
        parameters["method"] = method
        parameters["format"] = "JSON"
        parameters["charset"] = "utf-8"
        parameters["sign_type"] = "RSA2"
        parameters["timestamp"] = BeijingTime.string(date)
        parameters["version"] = "1.0"
        parameters["biz_content"] = try Self.json(bizContent)
        if let serials = credentials.certificateSerials {
            parameters["app_cert_sn"] = serials.appCertSN
            parameters["alipay_root_cert_sn"] = serials.alipayRootCertSN
        }
        parameters["sign"] = try credentials.sign(
            SignContent.make(parameters, excluding: SignContent.requestExclusions))
        return parameters
    }

    /// Compact JSON with sorted keys, so a pinned clock gives byte-identical output.
    static func json(_ object: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(object), as: UTF8.self)
    }
}
