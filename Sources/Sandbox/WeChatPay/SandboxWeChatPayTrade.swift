import OrderSafeModel
import WeChatPay

/// A transaction as the sandbox WeChat Pay keeps it.
struct SandboxWeChatPayTrade: Sendable {
    var outTradeNo: String
    var transactionID: String
    var prepayID: String
    var appID: String
    var description: String
    var amount: Money
    var notifyURL: String
    var attach: String?
    var state: WeChatPayTradeState
    var successTime: String?
    /// Refunds by `out_refund_no`.
    var refunds: [String: SandboxWeChatPayRefund] = [:]

    var refundedFen: Int64 { refunds.values.reduce(0) { $0 + $1.fen } }
}

struct SandboxWeChatPayRefund: Sendable {
    var refundID: String
    var fen: Int64
    var notifyURL: String?
}
