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
}

/// One line of the sandbox WeChat Pay's journal (``SandboxJournal``).
enum SandboxWeChatPayRecord: Codable {
    /// A transaction as it is from now on.
    case trade(SandboxWeChatPayTrade)
    /// A notification scheduled (its body as sent; its signature is made again when it is sent after a restart).
    case notification(id: String, url: String, outTradeNo: String, eventType: String, body: String)
    /// The merchant acknowledged it (2xx).
    case acknowledged(id: String)
}
