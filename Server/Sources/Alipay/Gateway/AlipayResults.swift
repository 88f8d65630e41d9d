import Foundation
import OrderSafeModel

/// `alipay.trade.query`: the trade, or that Alipay has none yet (the buyer has not paid).
public enum AlipayTradeQueryResult: Sendable, Hashable {
    /// `ACQ.TRADE_NOT_EXIST`: no trade for this order yet. Not an error.
    case notFound
    case trade(AlipayTrade)
}

/// A trade as `alipay.trade.query` reports it.
public struct AlipayTrade: Sendable, Hashable {
    public var tradeNo: String
    public var outTradeNo: String
    public var status: AlipayTradeStatus
    public var totalAmount: Money
    public var buyerID: String?
    /// `send_pay_date`: when the buyer's money went to the seller (Beijing time), once paid.
    public var paidAt: Date?
    /// `passback_params`: the merchant's data as the order sent it (Ant's own alipay-sdk-python 3.7.1411 lists it
    /// among `alipay.trade.query`'s answer fields: `alipay/aop/api/response/AlipayTradeQueryResponse.py`).
    public var passbackParams: String?
}

/// `alipay.trade.close`.
public enum AlipayCloseResult: Sendable, Hashable {
    case closed
    /// No trade exists (the buyer never opened the payment): nothing to close at Alipay.
    case notFound
}

/// `alipay.trade.refund`: `refundFee` is the total refunded on the trade so far.
public struct AlipayRefundResult: Sendable, Hashable {
    public var tradeNo: String
    public var outTradeNo: String
    public var refundFee: Money
    /// False when this request changed nothing (a repeat of an earlier `out_request_no`).
    public var fundChange: Bool
}

/// `alipay.trade.fastpay.refund.query`.
public enum AlipayRefundQueryResult: Sendable, Hashable {
    /// No refund with this `out_request_no` exists.
    case notFound
    case refund(outRequestNo: String, amount: Money, status: String?)
}
