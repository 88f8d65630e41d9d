import Foundation
import OrderSafeModel

/// The provider's account movements of the day (WeChat Pay's 资金账单, the BASIC account) checked against its trade
/// bill: each payment the trade bill lists credited to the account with its settled amount, each refund paid out with
/// its amount, by the provider's own numbers. A movement booked on another day than its trade (a payment just before
/// midnight credited after it) is counted, not flagged; the same payment or refund moved with another amount or the
/// other way is a difference, flagged with both lines.
public struct FundFlowCheck: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Codable {
        /// Read, its summary checked against its rows, and compared.
        case checked
        /// Not published yet.
        case waiting
        /// Downloaded but not readable (its digest, its format or its summary): flagged.
        case unreadable
    }

    /// A payment or refund the two bills disagree on.
    public struct Difference: Sendable, Hashable, Codable {
        /// 微信订单号 of a payment, 微信退款单号 of a refund.
        public var businessID: String
        public var kind: StatementEntry.Kind
        /// The trade bill's line and amount (fen).
        public var tradeBillLine: Int
        public var tradeBillMinor: Int64
        /// The fund-flow bill's line, and the amount it moved (fen: positive in, negative out).
        public var fundFlowLine: Int
        public var fundFlowMinor: Int64

        public init(
            businessID: String, kind: StatementEntry.Kind, tradeBillLine: Int, tradeBillMinor: Int64,
            fundFlowLine: Int, fundFlowMinor: Int64
        ) {
            self.businessID = businessID
            self.kind = kind
            self.tradeBillLine = tradeBillLine
            self.tradeBillMinor = tradeBillMinor
            self.fundFlowLine = fundFlowLine
            self.fundFlowMinor = fundFlowMinor
        }

        enum CodingKeys: String, CodingKey {
            case businessID = "business_id"
            case kind
            case tradeBillLine = "trade_bill_line"
            case tradeBillMinor = "trade_bill_minor"
            case fundFlowLine = "fund_flow_line"
            case fundFlowMinor = "fund_flow_minor"
        }
    }

    public var status: Status
    /// Why it waits, or why it could not be read.
    public var reason: String?
    /// The bill's own summary: its rows, what came in and what went out (fen).
    public var rows = 0
    public var incomeMinor: Int64 = 0
    public var expenseMinor: Int64 = 0
    /// Payments and refunds of the trade bill moved on the account as the trade bill says.
    public var matched = 0
    /// On the trade bill, not moved on this day's account (booked on another day).
    public var onlyInTradeBill = 0
    /// Payments or refunds moved on the account that the day's trade bill does not list (traded on another day).
    public var onlyInFundFlow = 0
    /// Fees taken less fees returned, as the account books them (fen).
    public var feesMinor: Int64 = 0
    /// Other movements (withdrawals, transfers, coupons…), counted.
    public var other = 0
    /// The first ``StatementReport/maxListed`` differences.
    public var differences: [Difference] = []
    /// Every difference, listed or not.
    public var differing = 0

    public init(status: Status, reason: String? = nil) {
        self.status = status
        self.reason = reason
    }

    mutating func differ(_ difference: Difference) {
        differing += 1
        if differences.count < StatementReport.maxListed { differences.append(difference) }
    }

    enum CodingKeys: String, CodingKey {
        case status, reason, rows
        case incomeMinor = "income_minor"
        case expenseMinor = "expense_minor"
        case matched
        case onlyInTradeBill = "only_in_trade_bill"
        case onlyInFundFlow = "only_in_fund_flow"
        case feesMinor = "fees_minor"
        case other, differences, differing
    }
}
