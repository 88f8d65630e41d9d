import Foundation
import OrderSafeModel

/// Alipay's trade states, as notifications and `alipay.trade.query` report them.
public enum AlipayTradeStatus: String, Sendable, Hashable, CaseIterable, Codable {
    /// Created, waiting for the buyer to pay.
    case waitBuyerPay = "WAIT_BUYER_PAY"
    /// Paid; refunds still possible.
    case tradeSuccess = "TRADE_SUCCESS"
    /// Paid and final; no more refunds.
    case tradeFinished = "TRADE_FINISHED"
    /// Closed unpaid, or fully refunded.
    case tradeClosed = "TRADE_CLOSED"

    /// True for the states in which the buyer's money was taken.
    public var isPaid: Bool { self == .tradeSuccess || self == .tradeFinished }
}

/// A verified asynchronous notification (`trade_status_sync`), typed.
public struct AlipayNotification: Sendable, Hashable {
    public var notifyID: String
    public var notifyTime: String
    public var appID: String
    public var sellerID: String?
    /// Our order number.
    public var outTradeNo: String
    /// Alipay's trade number: the provider transaction id.
    public var tradeNo: String
    public var tradeStatus: AlipayTradeStatus
    /// `total_amount` in fen.
    public var totalAmount: Money
    public var buyerID: String?
    public var passbackParams: String?
    public var subject: String?
    /// Present when the notification reports a refund.
    public var refund: Refund?

    /// A refund reported by a notification: `refund_fee` is the total refunded so far.
    public struct Refund: Sendable, Hashable {
        public var refundFee: Money
        public var outBizNo: String?
        public var gmtRefund: String?
    }

    /// Types the fields of a notification whose signature was already verified.
    init(fields: FormFields) throws(AlipayNotificationError) {
        func required(_ name: String) throws(AlipayNotificationError) -> String {
            guard let value = fields[name], !value.isEmpty else { throw .missingField(name) }
            return value
        }
        func amount(_ name: String) throws(AlipayNotificationError) -> Money {
            let text = try required(name)
            guard let fen = AlipayAmount.fen(text) else { throw .invalidField(name, text) }
            return Money(amountMinor: fen, currency: .cny)
        }
        let statusText = try required("trade_status")
        guard let status = AlipayTradeStatus(rawValue: statusText) else {
            throw .invalidField("trade_status", statusText)
        }
        notifyID = try required("notify_id")
        notifyTime = try required("notify_time")
        appID = try required("app_id")
        sellerID = fields["seller_id"]
        outTradeNo = try required("out_trade_no")
        tradeNo = try required("trade_no")
        tradeStatus = status
        totalAmount = try amount("total_amount")
        buyerID = fields["buyer_id"]
        passbackParams = fields["passback_params"]
        subject = fields["subject"]
        refund =
            fields["refund_fee"] == nil
            ? nil
            : Refund(
                refundFee: try amount("refund_fee"), outBizNo: fields["out_biz_no"], gmtRefund: fields["gmt_refund"])
    }

    /// The business checks against our order: app id, seller, order number and amount must all be ours.
    public func check(against expected: Expectation) throws(AlipayNotificationError) {
        guard appID == expected.appID else { throw .wrongAppID(appID) }
        if let seller = expected.sellerID, sellerID != seller { throw .wrongSeller(sellerID ?? "") }
        guard outTradeNo == expected.outTradeNo else { throw .unknownOrder(outTradeNo) }
        guard totalAmount == expected.amount else { throw .amountMismatch(expected: expected.amount, got: totalAmount) }
    }

    /// What a notification must match: our app id and seller, and the order's number and amount.
    public struct Expectation: Sendable, Hashable {
        public var appID: String
        public var sellerID: String?
        public var outTradeNo: String
        public var amount: Money

        public init(appID: String, sellerID: String?, outTradeNo: String, amount: Money) {
            self.appID = appID
            self.sellerID = sellerID
            self.outTradeNo = outTradeNo
            self.amount = amount
        }
    }
}

/// Why a notification was refused. None of these is answered `success`.
public enum AlipayNotificationError: Error, Equatable, CustomStringConvertible {
    case malformedBody(FormEncoding.Error)
    case missingSignature
    case unsupportedSignType(String)
    case badSignature
    case missingField(String)
    case invalidField(String, String)
    case wrongAppID(String)
    case wrongSeller(String)
    case unknownOrder(String)
    case amountMismatch(expected: Money, got: Money)

    /// Refused before its signature verified: the bytes could be anyone's.
    public var isUnauthenticated: Bool {
        switch self {
        case .malformedBody, .missingSignature, .unsupportedSignType, .badSignature: true
        case .missingField, .invalidField, .wrongAppID, .wrongSeller, .unknownOrder, .amountMismatch: false
        }
    }

    public var description: String {
        switch self {
        case .malformedBody(let error): "malformed notification body: \(error)"
        case .missingSignature: "the notification has no sign"
        case .unsupportedSignType(let type): "sign_type '\(type)' is not accepted (RSA2 only)"
        case .badSignature: "the notification's signature does not verify with the Alipay public key"
        case .missingField(let name): "the notification lacks '\(name)'"
        case .invalidField(let name, let value): "the notification's '\(name)' is invalid: '\(value.prefix(64))'"
        case .wrongAppID(let appID): "the notification is for app '\(appID)', not ours"
        case .wrongSeller(let seller): "the notification is for seller '\(seller)', not ours"
        case .unknownOrder(let orderNo): "the notification names order '\(orderNo)', which is not the expected order"
        case .amountMismatch(let expected, let got): "the notification says \(got), the order is \(expected)"
        }
    }
}
