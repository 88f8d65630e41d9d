import ChannelSupport
import Foundation

/// Alipay's daily `trade` bill (业务明细 and its 汇总), read strictly: the detail's `#` preamble (account, dates), its
/// list between the `业务明细列表` markers, each row's columns by the header's names (Alipay pads values with tabs),
/// then the footer's `#交易合计` and `#退款合计` lines, which its rows must add up to, and the summary's `合计` row,
/// which must agree with them. A refund is a row of its own (`业务类型` 退款) naming the refund request
/// (`退款批次号/请求号`) and the trade it returns; its `商家实收` is negative. Layout as described in Alipay's 对账说明
/// (https://opendocs.alipay.com/open/204/106262) and as merchants' parsers read it.
public struct AlipayTradeBill: Sendable, Hashable {
    /// One row of the detail.
    public struct Row: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            /// 交易: a payment.
            case trade = "交易"
            /// 退款: a refund.
            case refund = "退款"
        }

        /// The detail file's line (1-based).
        public var line: Int
        public var kind: Kind
        /// 支付宝交易号 (`trade_no`); a refund names the trade it returns.
        public var tradeNo: String
        /// 商户订单号 (`out_trade_no`).
        public var outTradeNo: String
        /// 完成时间, Beijing time.
        public var finishedAt: Date
        /// 订单金额（元）: the order's total.
        public var orderFen: Int64
        /// 商家实收（元）: what the merchant received (negative on a refund).
        public var receiptFen: Int64
        /// 服务费（元）, as written.
        public var feeFen: Int64
        /// 退款批次号/请求号 (`out_request_no`) of a refund.
        public var refundRequestNo: String
    }

    /// The file's own sums, from the detail's footer and the summary's 合计 row.
    public struct Totals: Sendable, Hashable {
        public var tradeCount: Int
        /// 商家实收共 of the trades.
        public var tradeReceiptFen: Int64
        public var refundCount: Int
        /// 商家实收退款共 (negative or zero).
        public var refundReceiptFen: Int64
        /// The summary's 服务费（元）.
        public var feeFen: Int64
    }

    /// `#账号：[…]`: the account (the partner id and a suffix), when the preamble names it.
    public var account: String?
    /// `#起始日期：[yyyy年MM月dd日 …]` as `yyyy-MM-dd`, when the preamble names it.
    public var startDay: String?
    public var rows: [Row]
    public var totals: Totals

    /// The columns a row must have.
    static let columns = [
        "支付宝交易号", "商户订单号", "业务类型", "完成时间", "订单金额（元）", "商家实收（元）", "服务费（元）", "退款批次号/请求号",
    ]
    static let summaryColumns = ["门店编号", "交易订单总笔数", "退款订单总笔数", "商家实收（元）", "服务费（元）"]

    /// Reads a downloaded bill: the zip's directory, then both files a line at a time as they inflate; the rows kept.
    public init(zip bytes: [UInt8], maxBytes: Int = 1 << 30) throws(AlipayBillError) {
        var reader = try AlipayBillReader(zip: bytes, maxBytes: maxBytes)
        try self.init(&reader)
    }

    /// Reads the two files' text (UTF-8 bytes).
    public init(detail: [UInt8], summary: [UInt8], detailName: String = "业务明细", summaryName: String = "业务明细(汇总)")
        throws(AlipayBillError)
    {
        var reader = try Rows(
            detail: BillLineReader(detail), summary: BillLineReader(summary), detailName: detailName,
            summaryName: summaryName)
        try self.init(&reader)
    }

    private init(_ reader: inout some BillRows) throws(AlipayBillError) {
        var rows: [Row] = []
        while let row = try reader.next() { rows.append(row) }
        guard let totals = reader.totals else { throw .files("the bill ended without its totals") }
        (account, startDay, self.rows, self.totals) = (reader.account, reader.startDay, rows, totals)
    }

    /// A bill read a row at a time, never whole: the detail's preamble and header when it is made, then a row per
    /// ``next()``; after the last, the footer and the summary's `合计`, checked against the rows (``totals``).
    public struct Rows<Detail: BillLines, Summary: BillLines>: BillRows {
        private var detail: DetailReader<Detail>
        private var summary: SummaryReader<Summary>
        private let index: [String: Int]
        public let account: String?
        public let startDay: String?
        private var sums = Sums()
        public private(set) var totals: Totals?

        init(detail lines: Detail, summary: Summary, detailName: String, summaryName: String)
            throws(AlipayBillError)
        {
            detail = DetailReader(file: detailName, lines: lines)
            self.summary = SummaryReader(file: summaryName, lines: summary)
            (account, startDay) = try detail.preamble()
            index = try detail.header()
        }

        public mutating func next() throws(AlipayBillError) -> Row? {
            guard totals == nil else { return nil }
            if let row = try detail.nextRow(index: index) {
                try sums.add(row, file: detail.file)
                return row
            }
            let footer = try detail.footer()
            try sums.check(against: footer, file: detail.file)
            let total = try summary.total()
            try sums.check(footer: footer, against: total, file: summary.file)
            totals = Totals(
                tradeCount: footer.trades.count, tradeReceiptFen: footer.trades.fen, refundCount: footer.refunds.count,
                refundReceiptFen: footer.refunds.fen, feeFen: total.feeFen)
            return nil
        }
    }

    /// What the rows read so far add up to.
    struct Sums {
        var trades = (count: 0, fen: Int64(0))
        var refunds = (count: 0, fen: Int64(0))
        var fee: Int64 = 0

        mutating func add(_ row: Row, file: String) throws(AlipayBillError) {
            if row.kind == .trade {
                trades.count += 1
                trades.fen = try sum(trades.fen, row.receiptFen, file: file, line: row.line)
            } else {
                refunds.count += 1
                refunds.fen = try sum(refunds.fen, row.receiptFen, file: file, line: row.line)
            }
            fee = try sum(fee, row.feeFen, file: file, line: row.line)
        }

        /// The footer's counts and sums against the rows.
        func check(against footer: Footer, file: String) throws(AlipayBillError) {
            guard trades.count == footer.trades.count, trades.fen == footer.trades.fen else {
                throw .totals(
                    file: file, line: footer.tradesLine,
                    "交易合计 says \(footer.trades.count) trades of \(footer.trades.fen) fen; the rows hold \(trades.count) of \(trades.fen)"
                )
            }
            guard refunds.count == footer.refunds.count, refunds.fen == footer.refunds.fen else {
                throw .totals(
                    file: file, line: footer.refundsLine,
                    "退款合计 says \(footer.refunds.count) refunds of \(footer.refunds.fen) fen; the rows hold \(refunds.count) of \(refunds.fen)"
                )
            }
        }

        /// The summary's 合计 row against the detail.
        func check(footer: Footer, against summary: SummaryTotal, file: String) throws(AlipayBillError) {
            let receipt = try sum(footer.trades.fen, footer.refunds.fen, file: file, line: summary.line)
            guard summary.tradeCount == footer.trades.count, summary.refundCount == footer.refunds.count,
                summary.receiptFen == receipt, summary.feeFen == fee
            else {
                throw .totals(
                    file: file, line: summary.line,
                    "合计 says \(summary.tradeCount) trades, \(summary.refundCount) refunds, \(summary.receiptFen) fen received, \(summary.feeFen) fen of fees; the detail holds \(footer.trades.count), \(footer.refunds.count), \(receipt), \(fee)"
                )
            }
        }
    }

    static func sum(_ a: Int64, _ b: Int64, file: String, line: Int) throws(AlipayBillError) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw .malformed(file: file, line: line, "the sums overflow") }
        return value
    }
}
