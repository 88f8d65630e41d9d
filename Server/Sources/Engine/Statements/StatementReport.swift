import Foundation
import Ledger
import OrderSafeModel

/// What checking one channel's day against its provider's statement found: what matched, what the statement
/// recovered (paid or refunded at the provider, missing from the ledger, confirmed by a query and recorded), and
/// every difference left for a human, with its evidence.
public struct StatementReport: Sendable, Hashable, Codable {
    public typealias Status = StatementRunStatus

    /// A count and its sums, by currency (minor units).
    public struct Tally: Sendable, Hashable, Codable {
        public var count = 0
        public var amountMinor: [String: Int64] = [:]

        public init() {}

        mutating func add(_ money: Money) {
            count += 1
            let (sum, overflow) = amountMinor[money.currency.code, default: 0].addingReportingOverflow(
                money.amountMinor)
            amountMinor[money.currency.code] = overflow ? .max : sum
        }

        enum CodingKeys: String, CodingKey {
            case count
            case amountMinor = "amount_minor"
        }
    }

    /// A difference between the ledger and the statement that nothing here could settle.
    public struct Discrepancy: Sendable, Hashable, Codable {
        public enum Kind: String, Sendable, Codable {
            /// On the statement, but the provider's query did not confirm it (or failed): not recorded.
            case notInLedger = "not_in_ledger"
            /// On the statement for an order number the ledger does not know (or of another channel).
            case unknownOrder = "unknown_order"
            /// Recorded in the ledger, and the provider dates it on this day or says it was not paid.
            case notInStatement = "not_in_statement"
            /// The statement's amount or currency differs from the ledger's.
            case amountDiffers = "amount_differs"
            /// A refund on the statement the ledger has not reversed and the provider's query did not confirm
            /// (or a partial refund, noted for a human).
            case refundNotReversed = "refund_not_reversed"
            /// Reversed in the ledger on this day, no refund of it on the statement, and the provider says it did not
            /// refund it (or dates the refund on this day).
            case refundNotInStatement = "refund_not_in_statement"
            /// The provider's account moved this payment or refund by another amount, or the other way, than its
            /// trade bill says (WeChat Pay's fund-flow bill: ``FundFlowCheck``).
            case fundFlowDiffers = "fund_flow_differs"
            /// The provider's fund-flow bill was downloaded but could not be read (digest, format, summary).
            case fundFlowUnreadable = "fund_flow_unreadable"
        }

        public var kind: Kind
        public var orderNo: String?
        public var transactionID: String
        /// The statement's line, when the difference is one.
        public var line: Int?
        public var statementAmount: Money?
        public var ledgerAmount: Money?
        public var detail: String

        enum CodingKeys: String, CodingKey {
            case kind
            case orderNo = "order_no"
            case transactionID = "transaction_id"
            case line
            case statementAmount = "statement_amount"
            case ledgerAmount = "ledger_amount"
            case detail
        }
    }

    public var channel: Channel
    public var day: String
    public var status: Status
    public var ranAt: Date
    /// Why the day is waiting.
    public var waitingFor: String?
    /// The file's own summary (checked against its rows when it was read).
    public var statementTotals: StatementTotals?
    public var matched = Tally()
    public var recovered = Tally()
    public var refundsMatched = Tally()
    public var refundsRecovered = Tally()
    /// Payments recorded in the ledger on this day that the provider dates on another (a payment made just before
    /// midnight and recorded just after): on that day's statement, not this one.
    public var otherDay = 0
    /// Refunds the ledger recorded on this day that the provider made on another (or does not date: WeChat Pay's
    /// and Alipay's queries say only that a payment was refunded): on that day's statement.
    public var refundsOtherDay = 0
    /// App Store family-shared purchases recorded (or revoked) on this day: access shared, no money; the
    /// purchaser's own transaction is the payment.
    public var shared = 0
    public var flagged = Tally()
    /// The provider transactions this day's runs recovered (kept across runs: a second run finds them matched).
    public var recoveredTransactions: [String] = []
    public var recoveredRefunds: [String] = []
    /// The account's movements checked against the statement (WeChat Pay's fund-flow bill).
    public var fundFlow: FundFlowCheck?
    /// The first ``maxListed`` differences (``flagged`` counts them all).
    public var discrepancies: [Discrepancy] = []

    /// The most differences a report lists.
    public static let maxListed = 1_000

    public init(channel: Channel, day: String, status: Status, ranAt: Date) {
        self.channel = channel
        self.day = day
        self.status = status
        self.ranAt = ranAt
    }

    mutating func flag(_ discrepancy: Discrepancy) {
        flagged.add(discrepancy.statementAmount ?? discrepancy.ledgerAmount ?? Money(amountMinor: 0, currency: .cny))
        if discrepancies.count < Self.maxListed { discrepancies.append(discrepancy) }
    }

    /// Reads a kept report; one kept before a count existed reads it as 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        channel = try container.decode(Channel.self, forKey: .channel)
        day = try container.decode(String.self, forKey: .day)
        status = try container.decode(Status.self, forKey: .status)
        ranAt = try container.decode(Date.self, forKey: .ranAt)
        waitingFor = try container.decodeIfPresent(String.self, forKey: .waitingFor)
        statementTotals = try container.decodeIfPresent(StatementTotals.self, forKey: .statementTotals)
        matched = try container.decode(Tally.self, forKey: .matched)
        recovered = try container.decode(Tally.self, forKey: .recovered)
        refundsMatched = try container.decode(Tally.self, forKey: .refundsMatched)
        refundsRecovered = try container.decode(Tally.self, forKey: .refundsRecovered)
        otherDay = try container.decode(Int.self, forKey: .otherDay)
        refundsOtherDay = try container.decodeIfPresent(Int.self, forKey: .refundsOtherDay) ?? 0
        shared = try container.decodeIfPresent(Int.self, forKey: .shared) ?? 0
        flagged = try container.decode(Tally.self, forKey: .flagged)
        recoveredTransactions = try container.decode([String].self, forKey: .recoveredTransactions)
        recoveredRefunds = try container.decode([String].self, forKey: .recoveredRefunds)
        fundFlow = try container.decodeIfPresent(FundFlowCheck.self, forKey: .fundFlow)
        discrepancies = try container.decode([Discrepancy].self, forKey: .discrepancies)
    }

    enum CodingKeys: String, CodingKey {
        case channel, day, status
        case ranAt = "ran_at"
        case waitingFor = "waiting_for"
        case statementTotals = "statement_totals"
        case matched, recovered
        case refundsMatched = "refunds_matched"
        case refundsRecovered = "refunds_recovered"
        case otherDay = "other_day"
        case refundsOtherDay = "refunds_other_day"
        case shared
        case flagged
        case recoveredTransactions = "recovered_transactions"
        case recoveredRefunds = "recovered_refunds"
        case fundFlow = "fund_flow"
        case discrepancies
    }
}
