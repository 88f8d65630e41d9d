import ChannelSupport

/// A bill's rows read one at a time, and what the bill says of itself once they are all read.
public protocol BillRows {
    /// The next row; nil once the footer and summary were read and found to agree with the rows.
    mutating func next() throws(AlipayBillError) -> AlipayTradeBill.Row?
    /// `#账号：[…]` of the preamble.
    var account: String? { get }
    /// `#起始日期：[…]` as `yyyy-MM-dd`.
    var startDay: String? { get }
    /// The bill's totals, once ``next()`` returned nil.
    var totals: AlipayTradeBill.Totals? { get }
}

/// A downloaded bill (the zip) read a row at a time as its files inflate, never whole: what fails under the lines
/// (the zip's data, a CRC-32, a byte that is not GBK) refuses the bill, whatever the lines held.
public struct AlipayBillReader: BillRows {
    private var rows: AlipayTradeBill.Rows<GBKLines, GBKLines>
    private let detail: GBKLines
    private let summary: GBKLines

    public init(zip bytes: [UInt8], maxBytes: Int = 1 << 30) throws(AlipayBillError) {
        let archive = try AlipayBillArchive(bytes, maxBytes: maxBytes)
        let (detail, summary) = (try archive.lines(of: .detail), try archive.lines(of: .summary))
        do {
            rows = try AlipayTradeBill.Rows(
                detail: detail, summary: summary, detailName: archive.name(of: .detail),
                summaryName: archive.name(of: .summary))
        } catch {
            throw detail.failure ?? summary.failure ?? error
        }
        (self.detail, self.summary) = (detail, summary)
    }

    public var account: String? { rows.account }
    public var startDay: String? { rows.startDay }
    public var totals: AlipayTradeBill.Totals? { rows.totals }

    public mutating func next() throws(AlipayBillError) -> AlipayTradeBill.Row? {
        let row: AlipayTradeBill.Row?
        do {
            row = try rows.next()
        } catch {
            // A file that stopped early because of what lies under it says why.
            throw detail.failure ?? summary.failure ?? error
        }
        if row == nil, let failure = detail.failure ?? summary.failure { throw failure }
        return row
    }
}
