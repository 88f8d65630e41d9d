import Alipay

/// A trade as the sandbox Alipay keeps it.
struct SandboxAlipayTrade: SandboxTrade {
    var outTradeNo: String
    var tradeNo: String
    var appID: String
    var totalFen: Int64
    var subject: String
    var notifyURL: String?
    var passbackParams: String?
    var status: AlipayTradeStatus
    var buyerID: String
    /// Refunds by `out_request_no`, in fen.
    var refunds: [String: Int64] = [:]
    /// When the buyer paid (`yyyy-MM-dd HH:mm:ss`, Beijing): its day's bill lists it.
    var paidAt: String?
    /// When each refund went through, by `out_request_no`.
    var refundedAt: [String: String]?

    var refundedFen: Int64 { refunds.values.reduce(0, +) }
}

/// One line of the sandbox Alipay's journal (``SandboxJournal``).
typealias SandboxAlipayRecord = SandboxTradeRecord<SandboxAlipayTrade>
