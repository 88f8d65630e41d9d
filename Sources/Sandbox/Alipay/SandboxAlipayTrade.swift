import Alipay

/// A trade as the sandbox Alipay keeps it.
struct SandboxAlipayTrade: Sendable {
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

    var refundedFen: Int64 { refunds.values.reduce(0, +) }
}
