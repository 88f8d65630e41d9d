import OrderSafeModel
import WeChatPay

/// A transaction as the sandbox WeChat Pay keeps it.
struct SandboxWeChatPayTrade: SandboxTrade {
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

struct SandboxWeChatPayRefund: Sendable, Codable {
    var refundID: String
    var fen: Int64
    var notifyURL: String?
    /// When the refund was accepted (RFC 3339, Beijing): its day's bill lists it.
    var time: String?
}

/// One line of the sandbox WeChat Pay's journal (``SandboxJournal``).
typealias SandboxWeChatPayRecord = SandboxTradeRecord<SandboxWeChatPayTrade>
