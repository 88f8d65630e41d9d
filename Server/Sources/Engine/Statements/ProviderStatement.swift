import Foundation
import OrderSafeModel

/// One channel's statement of one day, as its provider published it and its parser checked it (the file's own
/// totals agree with its rows), or as its API lists the day (the App Store): what the provider took and gave back
/// that day.
public struct ProviderStatement: Sendable {
    public var day: StatementDay
    public var entries: StatementEntries
    /// What the file itself says it holds; nil when the provider publishes no totals (the App Store's API).
    public var totals: StatementTotals?
    /// The account's movements of the day checked against the statement, where the provider publishes them.
    public var fundFlow: FundFlowCheck?

    public init(day: StatementDay, entries: StatementEntries, totals: StatementTotals?) {
        self.day = day
        self.entries = entries
        self.totals = totals
    }

    /// A statement whose entries are held in memory.
    public init(day: StatementDay, entries: [StatementEntry], totals: StatementTotals?) {
        self.init(day: day, entries: StatementEntries(entries), totals: totals)
    }
}

/// A payment or a refund on a provider's statement.
public struct StatementEntry: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable {
        case payment, refund
    }

    public var kind: Kind
    /// The line of the file it was read from (1-based), for the evidence.
    public var line: Int
    /// The merchant's order number (Alipay `out_trade_no`, WeChat Pay 商户订单号).
    public var orderNo: String
    /// The provider's payment id (Alipay `trade_no`, WeChat Pay 微信订单号); a refund names the payment it returns.
    public var providerTransactionID: String
    /// A refund's merchant refund number.
    public var refundNo: String?
    /// What was paid, or refunded; nil when the provider does not say (an App Store transaction signed before
    /// Apple added `price`).
    public var amount: Money?
    /// The provider's fee in minor units (negative on a refund: returned).
    public var feeMinor: Int64

    public init(
        kind: Kind, line: Int, orderNo: String, providerTransactionID: String, refundNo: String? = nil, amount: Money?,
        feeMinor: Int64
    ) {
        self.kind = kind
        self.line = line
        self.orderNo = orderNo
        self.providerTransactionID = providerTransactionID
        self.refundNo = refundNo
        self.amount = amount
        self.feeMinor = feeMinor
    }
}

/// A statement's own summary: its rows, what they paid and refunded, and the fees, in minor units.
public struct StatementTotals: Sendable, Hashable, Codable {
    public var rows: Int
    public var paidMinor: Int64
    public var refundedMinor: Int64
    public var feeMinor: Int64

    public init(rows: Int, paidMinor: Int64, refundedMinor: Int64, feeMinor: Int64) {
        self.rows = rows
        self.paidMinor = paidMinor
        self.refundedMinor = refundedMinor
        self.feeMinor = feeMinor
    }

    enum CodingKeys: String, CodingKey {
        case rows
        case paidMinor = "paid_minor"
        case refundedMinor = "refunded_minor"
        case feeMinor = "fee_minor"
    }
}

/// Whether a provider has published a day's statement.
public enum StatementAvailability: Sendable {
    case published(ProviderStatement)
    /// Not yet (WeChat Pay's `STATEMENT_CREATING`, a day not over): try again later.
    case notYet(String)
}
