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

    /// Reads a downloaded bill: the zip's directory, then both files a line at a time as they inflate.
    public init(zip bytes: [UInt8], maxBytes: Int = 1 << 30) throws(AlipayBillError) {
        let archive = try AlipayBillArchive(bytes, maxBytes: maxBytes)
        let detail = try archive.lines(of: .detail)
        let summary = try archive.lines(of: .summary)
        do {
            try self.init(
                detailLines: detail, summaryLines: summary, detailName: archive.name(of: .detail),
                summaryName: archive.name(of: .summary))
        } catch {
            // A file that stopped early because of what lies under it says why.
            throw detail.failure ?? summary.failure ?? error
        }
        if let failure = detail.failure ?? summary.failure { throw failure }
    }

    /// Reads the two files' text (UTF-8 bytes).
    public init(detail: [UInt8], summary: [UInt8], detailName: String = "业务明细", summaryName: String = "业务明细(汇总)")
        throws(AlipayBillError)
    {
        try self.init(
            detailLines: BillLineReader(detail), summaryLines: BillLineReader(summary), detailName: detailName,
            summaryName: summaryName)
    }

    init<Detail: BillLines, Summary: BillLines>(
        detailLines: Detail, summaryLines: Summary, detailName: String, summaryName: String
    ) throws(AlipayBillError) {
        var reader = DetailReader(file: detailName, lines: detailLines)
        (account, startDay) = try reader.preamble()
        let index = try reader.header()
        rows = try reader.rows(index: index)
        let footer = try reader.footer()
        try Self.check(rows, against: footer, file: detailName)
        var summaryReader = SummaryReader(file: summaryName, lines: summaryLines)
        let summary = try summaryReader.total()
        try Self.check(rows, footer: footer, against: summary, file: summaryName)
        totals = Totals(
            tradeCount: footer.trades.count, tradeReceiptFen: footer.trades.fen, refundCount: footer.refunds.count,
            refundReceiptFen: footer.refunds.fen, feeFen: summary.feeFen)
    }

    /// The footer's counts and sums against the rows.
    private static func check(_ rows: [Row], against footer: Footer, file: String) throws(AlipayBillError) {
        var (trades, refunds) = ((count: 0, fen: Int64(0)), (count: 0, fen: Int64(0)))
        for row in rows {
            if row.kind == .trade {
                trades.count += 1
                trades.fen = try sum(trades.fen, row.receiptFen, file: file, line: row.line)
            } else {
                refunds.count += 1
                refunds.fen = try sum(refunds.fen, row.receiptFen, file: file, line: row.line)
            }
        }
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
    private static func check(
        _ rows: [Row], footer: Footer, against summary: SummaryTotal, file: String
    ) throws(AlipayBillError) {
        var fee: Int64 = 0
        for row in rows { fee = try sum(fee, row.feeFen, file: file, line: summary.line) }
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

    static func sum(_ a: Int64, _ b: Int64, file: String, line: Int) throws(AlipayBillError) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw .malformed(file: file, line: line, "the sums overflow") }
        return value
    }
}
