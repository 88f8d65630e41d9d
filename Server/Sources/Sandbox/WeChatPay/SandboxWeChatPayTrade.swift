import OrderSafeModel
import WeChatPay

/// A transaction as the sandbox WeChat Pay keeps it.
struct SandboxWeChatPayTrade: Sendable, Codable {
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
enum SandboxWeChatPayRecord: Codable {
    /// A transaction as it is from now on, with the notification its change sent, if any.
    case trade(SandboxWeChatPayTrade, notification: SandboxNotice?)
    /// The merchant acknowledged that notification (2xx).
    case acknowledged(id: String)
}
