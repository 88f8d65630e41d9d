import ChannelSupport
import Foundation

/// A WeChat Pay fund-flow bill (资金账单, `GET /v3/bill/fundflowbill`, downloaded and checked against its
/// `hash_value`): every movement of the merchant's account that day — a payment credited, its fee taken, a refund
/// paid out —, parsed strictly in one pass: the detail header, one row per movement, the summary header and the
/// summary row, the summary checked against the rows (counts and sums of income and expense). Amounts are yuan,
/// read into fen exactly; times are Beijing time as written. Format:
/// https://pay.weixin.qq.com/docs/merchant/products/bill-download/format-funds.html
public struct WeChatPayFundFlowBill: Sendable, Hashable {
    /// One movement of the account.
    public struct Row: Sendable, Hashable {
        /// 记账时间: `yyyy-MM-dd HH:mm:ss`, Beijing time.
        public var time: String
        /// 微信支付业务单号: the payment or refund the movement belongs to.
        public var businessID: String
        /// 资金流水单号.
        public var flowID: String
        /// 业务名称 and 业务类型 (`交易`, `退款`, `扣除交易手续费`…).
        public var businessName: String
        public var businessType: String
        /// 收支类型: 收入 (true) or 支出.
        public var income: Bool
        /// 收支金额 in fen (never negative: `income` says which way).
        public var amountFen: Int64
        /// 账户结余 in fen after the movement.
        public var balanceFen: Int64
        /// 业务凭证号.
        public var voucher: String
    }

    /// The summary row: 资金流水总笔数, 收入笔数, 收入金额, 支出笔数, 支出金额.
    public struct Totals: Sendable, Hashable {
        public var count: Int
        public var incomeCount: Int
        public var incomeFen: Int64
        public var expenseCount: Int
        public var expenseFen: Int64
    }

    public var rows: [Row]
    public var totals: Totals

    /// The detail columns read, by their header names.
    static let columns = [
        "记账时间", "微信支付业务单号", "资金流水单号", "业务名称", "业务类型", "收支类型", "收支金额(元)", "账户结余(元)",
        "业务凭证号",
    ]
    /// The most rows a day's file is read with (a larger one is refused, not cut).
    public static let maxRows = 5_000_000

    public init(_ bytes: [UInt8]) throws(WeChatPayBillError) {
        var lines = WeChatPayBillText.lines(bytes)
        guard let header = lines.next() else { throw .malformed(line: 1, "the file is empty") }
        // Full-width parentheses are read as WeChat Pay's half-width ones.
        let names = WeChatPayBillText.fields(header.text, backticks: true).map {
            String($0).replacingOccurrences(of: "（", with: "(").replacingOccurrences(of: "）", with: ")")
        }
        let index = try WeChatPayBillText.columns(names, required: Self.columns)
        var rows: [Row] = []
        var summaryHeader: (number: Int, text: Substring)?
        while let line = lines.next() {
            let fields = WeChatPayBillText.fields(line.text, backticks: true)
            if fields.first == "资金流水总笔数" {
                summaryHeader = line
                break
            }
            guard rows.count < Self.maxRows else {
                throw .malformed(line: line.number, "more than \(Self.maxRows) rows")
            }
            guard line.text.first == "`" else { throw .malformed(line: line.number, "a row's fields start with `") }
            guard fields.count == names.count else {
                throw .malformed(line: line.number, "\(fields.count) fields where the header names \(names.count)")
            }
            func text(_ column: String) -> String { String(fields[index[column]!]) }
            func fen(_ column: String) throws(WeChatPayBillError) -> Int64 {
                guard let value = YuanAmount.fen(text(column)) else {
                    throw .malformed(
                        line: line.number, "\(column) '\(text(column).prefix(32))' is not an amount in yuan")
                }
                return value
            }
            let direction = text("收支类型")
            guard direction == "收入" || direction == "支出" else {
                throw .malformed(line: line.number, "收支类型 '\(direction.prefix(8))' is neither 收入 nor 支出")
            }
            rows.append(
                Row(
                    time: text("记账时间"), businessID: text("微信支付业务单号"), flowID: text("资金流水单号"),
                    businessName: text("业务名称"), businessType: text("业务类型"), income: direction == "收入",
                    amountFen: try fen("收支金额(元)"), balanceFen: try fen("账户结余(元)"), voucher: text("业务凭证号")))
        }
        let summary = try WeChatPayBillText.Summary(header: summaryHeader, rest: &lines)
        totals = Totals(
            count: try summary.count("资金流水总笔数"), incomeCount: try summary.count("收入笔数"),
            incomeFen: try summary.fen("收入金额"), expenseCount: try summary.count("支出笔数"),
            expenseFen: try summary.fen("支出金额"))
        self.rows = rows
        try check()
    }

    /// The summary says what the rows add up to.
    private func check() throws(WeChatPayBillError) {
        var sums = Totals(count: rows.count, incomeCount: 0, incomeFen: 0, expenseCount: 0, expenseFen: 0)
        for row in rows {
            if row.income {
                let (sum, overflow) = sums.incomeFen.addingReportingOverflow(row.amountFen)
                guard !overflow else { throw .totalsDiffer("the amounts overflow") }
                sums.incomeCount += 1
                sums.incomeFen = sum
            } else {
                let (sum, overflow) = sums.expenseFen.addingReportingOverflow(row.amountFen)
                guard !overflow else { throw .totalsDiffer("the amounts overflow") }
                sums.expenseCount += 1
                sums.expenseFen = sum
            }
        }
        guard sums == totals else { throw .totalsDiffer("the rows add up to \(sums), the summary says \(totals)") }
    }
}
