import ChannelSupport
import Foundation

/// A WeChat Pay trade bill (`GET /v3/bill/tradebill`, downloaded and checked against its `hash_value`), parsed
/// strictly in one pass: the detail header, one row per payment or refund, the summary header and the summary row.
/// Every field of the detail and summary rows starts with a backtick (so that Excel keeps long numbers whole);
/// amounts are yuan with at most two decimals, read into fen exactly; times are Beijing time as written.
/// Format: https://pay.weixin.qq.com/docs/merchant/products/bill-download/format-trade.html. The summary is checked
/// against the rows (count and sums): a file that does not add up is refused, never compared in part.
public struct WeChatPayTradeBill: Sendable, Hashable {
    /// One payment (`SUCCESS`) or refund (`REFUND`) of the day.
    public struct Row: Sendable, Hashable {
        /// `yyyy-MM-dd HH:mm:ss`, Beijing time.
        public var time: String
        public var appID: String
        public var merchantID: String
        public var transactionID: String
        public var outTradeNo: String
        public var tradeType: String
        /// `SUCCESS`, `REFUND`, `REVOKED`…
        public var state: String
        public var currency: String
        /// 应结订单金额: what the merchant is settled for the payment, in fen (0 on a refund row).
        public var settlementFen: Int64
        /// 微信退款单号 and 商户退款单号 of a refund row.
        public var refundID: String?
        public var outRefundNo: String?
        /// 退款金额 in fen (0 on a payment row).
        public var refundFen: Int64
        /// 手续费: the fee, in fen (negative on a refund row: returned).
        public var feeFen: Int64
        /// 订单金额 in fen.
        public var orderFen: Int64
    }

    /// The summary row: 总交易单数, 应结订单总金额, 退款总金额, 手续费总金额, 订单总金额.
    public struct Totals: Sendable, Hashable {
        public var count: Int
        public var settlementFen: Int64
        public var refundFen: Int64
        public var feeFen: Int64
        public var orderFen: Int64
    }

    public var rows: [Row]
    public var totals: Totals

    /// The detail columns read, by their header names (the others are kept out).
    static let columns = [
        "交易时间", "公众账号ID", "商户号", "微信订单号", "商户订单号", "交易类型", "交易状态", "货币种类", "应结订单金额",
        "微信退款单号", "商户退款单号", "退款金额", "手续费", "订单金额",
    ]
    static let summaryColumns = ["总交易单数", "应结订单总金额", "退款总金额", "手续费总金额", "订单总金额"]
    /// The most rows a day's file is read with (a larger one is refused, not cut).
    public static let maxRows = 5_000_000
    /// The decimals of 手续费 and 手续费总金额: five in every published bill (API v2 and v3, 2016 to 2024: `0.00000`,
    /// `0.01000`, `-1.56000`), each fee rounded to the fen; the format page's examples show two.
    static let feeDecimals = 5

    /// The whole bill (UTF-8 bytes), its rows kept.
    public init(_ bytes: [UInt8]) throws(WeChatPayBillError) {
        var reader = try Rows(WeChatPayBillText.lines(bytes))
        var rows: [Row] = []
        while let row = try reader.next() { rows.append(row) }
        guard let totals = reader.totals else { throw .truncated(line: 1, "no summary") }
        self.rows = rows
        self.totals = totals
    }

    /// A bill read a row at a time, never whole: the header when it is made, then a row per ``next()``; at the end
    /// the summary is read and checked against the rows (count and sums), and ``totals`` says it.
    public struct Rows<Lines: BillLines> {
        private var lines: Lines
        private let names: [String]
        private let index: [String: Int]
        private var sums = Totals(count: 0, settlementFen: 0, refundFen: 0, feeFen: 0, orderFen: 0)
        /// The summary, once the last row was read and the summary agreed with the rows.
        public private(set) var totals: Totals?

        public init(_ lines: Lines) throws(WeChatPayBillError) {
            self.lines = lines
            guard let header = self.lines.next() else { throw .malformed(line: 1, "the file is empty") }
            names = WeChatPayBillText.fields(header.text, backticks: false).map(String.init)
            index = try WeChatPayBillText.columns(names, required: WeChatPayTradeBill.columns)
        }

        /// The next row; nil once the summary was read and found to agree with the rows.
        public mutating func next() throws(WeChatPayBillError) -> Row? {
            guard totals == nil else { return nil }
            let next = lines.next()
            guard let line = next, line.text.first == "`" else {
                let summary = try WeChatPayBillText.Summary(header: next, rest: &lines)
                let said = Totals(
                    count: try summary.count("总交易单数"), settlementFen: try summary.fen("应结订单总金额"),
                    refundFen: try summary.fen("退款总金额"),
                    feeFen: try summary.fen("手续费总金额", signed: true, decimals: WeChatPayTradeBill.feeDecimals),
                    orderFen: try summary.fen("订单总金额"))
                guard sums == said else {
                    throw .totalsDiffer("the rows add up to \(sums), the summary says \(said)")
                }
                totals = said
                return nil
            }
            guard sums.count < WeChatPayTradeBill.maxRows else {
                throw .malformed(line: line.number, "more than \(WeChatPayTradeBill.maxRows) rows")
            }
            let row = try self.row(line)
            let (settlement, o1) = sums.settlementFen.addingReportingOverflow(row.settlementFen)
            let (refund, o2) = sums.refundFen.addingReportingOverflow(row.refundFen)
            let (fee, o3) = sums.feeFen.addingReportingOverflow(row.feeFen)
            let (order, o4) = sums.orderFen.addingReportingOverflow(row.orderFen)
            guard !(o1 || o2 || o3 || o4) else { throw .totalsDiffer("the amounts overflow") }
            (sums.settlementFen, sums.refundFen, sums.feeFen, sums.orderFen) = (settlement, refund, fee, order)
            sums.count += 1
            return row
        }

        private func row(_ line: (number: Int, text: Substring)) throws(WeChatPayBillError) -> Row {
            let fields = WeChatPayBillText.fields(line.text, backticks: true)
            guard fields.count == names.count else {
                throw .malformed(line: line.number, "\(fields.count) fields where the header names \(names.count)")
            }
            func text(_ column: String) -> String { String(fields[index[column]!]) }
            func fen(_ column: String, signed: Bool = false, decimals: Int = 2) throws(WeChatPayBillError) -> Int64 {
                try WeChatPayBillText.fen(
                    text(column), named: column, line: line.number, signed: signed, decimals: decimals)
            }
            let refundID = text("微信退款单号")
            let outRefundNo = text("商户退款单号")
            return Row(
                time: text("交易时间"), appID: text("公众账号ID"), merchantID: text("商户号"),
                transactionID: text("微信订单号"), outTradeNo: text("商户订单号"), tradeType: text("交易类型"),
                state: text("交易状态"), currency: text("货币种类"), settlementFen: try fen("应结订单金额"),
                refundID: refundID.isEmpty || refundID == "0" ? nil : refundID,
                outRefundNo: outRefundNo.isEmpty || outRefundNo == "0" ? nil : outRefundNo,
                refundFen: try fen("退款金额"),
                feeFen: try fen("手续费", signed: true, decimals: WeChatPayTradeBill.feeDecimals),
                orderFen: try fen("订单金额"))
        }
    }
}

/// Why a WeChat Pay bill was refused: the line it fails on, and why.
public enum WeChatPayBillError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformed(line: Int, String)
    case truncated(line: Int, String)
    case totalsDiffer(String)

    public var description: String {
        switch self {
        case .malformed(let line, let reason): "line \(line): \(reason)"
        case .truncated(let line, let reason): "line \(line): the file is cut short: \(reason)"
        case .totalsDiffer(let reason): "the summary does not match the rows: \(reason)"
        }
    }
}
