import ChannelSupport
import Foundation
import OrderSafeModel

/// `POST /v3/pay/transactions/app`: what the merchant asks WeChat Pay to collect.
public struct WeChatPayAppOrder: Sendable, Hashable {
    public var outTradeNo: String
    public var description: String
    public var amount: Money
    public var notifyURL: String
    /// `time_expire`: after this the order can no longer be paid.
    public var expiresAt: Date?
    /// `attach`: returned untouched in the notification and queries (at most 128 bytes).
    public var attach: String?

    public init(
        outTradeNo: String, description: String, amount: Money, notifyURL: String, expiresAt: Date? = nil,
        attach: String? = nil
    ) {
        self.outTradeNo = outTradeNo
        self.description = description
        self.amount = amount
        self.notifyURL = notifyURL
        self.expiresAt = expiresAt
        self.attach = attach
    }

    func json(appID: String, merchantID: String) -> String {
        var members = [
            "\"appid\":\(JSONString.encode(appID))", "\"mchid\":\(JSONString.encode(merchantID))",
            "\"description\":\(JSONString.encode(description))", "\"out_trade_no\":\(JSONString.encode(outTradeNo))",
            "\"notify_url\":\(JSONString.encode(notifyURL))",
            "\"amount\":{\"total\":\(amount.amountMinor),\"currency\":\(JSONString.encode(amount.currency.code))}",
        ]
        if let expiresAt { members.append("\"time_expire\":\(JSONString.encode(RFC3339Beijing.string(expiresAt)))") }
        if let attach { members.append("\"attach\":\(JSONString.encode(attach))") }
        return "{" + members.joined(separator: ",") + "}"
    }
}

/// `POST /v3/refund/domestic/refunds`; `outRefundNo` is the idempotency key (a repeat refunds nothing more).
public struct WeChatPayRefundRequest: Sendable, Hashable {
    public var outTradeNo: String
    public var outRefundNo: String
    public var refund: Money
    /// The original transaction's total.
    public var total: Money
    public var reason: String?
    public var notifyURL: String?

    public init(
        outTradeNo: String, outRefundNo: String, refund: Money, total: Money, reason: String? = nil,
        notifyURL: String? = nil
    ) {
        self.outTradeNo = outTradeNo
        self.outRefundNo = outRefundNo
        self.refund = refund
        self.total = total
        self.reason = reason
        self.notifyURL = notifyURL
    }

    func json() -> String {
        var members = [
            "\"out_trade_no\":\(JSONString.encode(outTradeNo))", "\"out_refund_no\":\(JSONString.encode(outRefundNo))",
            "\"amount\":{\"refund\":\(refund.amountMinor),\"total\":\(total.amountMinor),\"currency\":\(JSONString.encode(refund.currency.code))}",
        ]
        if let reason { members.append("\"reason\":\(JSONString.encode(reason))") }
        if let notifyURL { members.append("\"notify_url\":\(JSONString.encode(notifyURL))") }
        return "{" + members.joined(separator: ",") + "}"
    }
}

/// A transaction query's answer: the transaction, or that WeChat Pay has none (`ORDER_NOT_EXIST`: not paid yet).
public enum WeChatPayQueryResult: Sendable, Hashable {
    case notFound
    case transaction(WeChatPayTransaction)
}

/// A refund query's answer.
public enum WeChatPayRefundQueryResult: Sendable, Hashable {
    case notFound
    case refund(WeChatPayRefund)
}

/// `GET /v3/bill/tradebill`: where to download a day's bill and its digest.
public struct WeChatPayBill: Sendable, Hashable {
    public var hashType: String
    /// `hash_value`: the bill's SHA-1, lowercase hex (of the bill itself, a gzip download inflated first).
    public var digest: String
    public var downloadURL: String
    /// Asked for with `tar_type=GZIP`: the download is the bill gzipped.
    public var gzip = false
}

extension WeChatPayInvocation {
    /// From the seven signed parameters.
    init(_ parameters: [String: String]) {
        self.init(
            appid: parameters["appid"] ?? "", partnerid: parameters["partnerid"] ?? "",
            prepayid: parameters["prepayid"] ?? "",
            package: parameters["package"] ?? "", noncestr: parameters["noncestr"] ?? "",
            timestamp: parameters["timestamp"] ?? "",
            sign: parameters["sign"] ?? "")
    }
}

/// RFC 3339 in Beijing time (`2026-11-22T14:30:00+08:00`), as WeChat Pay writes `time_expire` and `success_time`.
public enum RFC3339Beijing {
    public static func string(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 8 * 3600)!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d+08:00", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }
}
