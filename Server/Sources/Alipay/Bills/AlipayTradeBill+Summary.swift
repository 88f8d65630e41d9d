import ChannelSupport

extension AlipayTradeBill {
    /// The summary's `合计` row.
    struct SummaryTotal {
        var line: Int
        var tradeCount: Int
        var refundCount: Int
        var receiptFen: Int64
        var feeFen: Int64
    }

    /// The summary file (业务明细(汇总)): `#` lines, a header, a row per store and the `合计` row.
    struct SummaryReader<Lines: BillLines> {
        let file: String
        var lines: Lines

        mutating func total() throws(AlipayBillError) -> SummaryTotal {
            var header: (number: Int, names: [String], index: [String: Int])?
            var total: SummaryTotal?
            while let line = lines.next() {
                if line.text.hasPrefix("#") { continue }
                let fields = BillText.fields(line.text, backticks: false)
                guard let columns = header else {
                    let names = fields.map(String.init)
                    let (index, missing) = BillText.columns(names, required: AlipayTradeBill.summaryColumns)
                    if let missing {
                        throw .malformed(file: file, line: line.number, "the header has no column \(missing)")
                    }
                    header = (line.number, names, index)
                    continue
                }
                guard fields.count == columns.names.count else {
                    throw .malformed(
                        file: file, line: line.number, "\(fields.count) fields for \(columns.names.count) columns")
                }
                func field(_ name: String) -> String { String(fields[columns.index[name]!]) }
                guard field("门店编号") == "合计" else { continue }
                guard total == nil else { throw .malformed(file: file, line: line.number, "a second 合计 row") }
                guard let trades = Int(field("交易订单总笔数")), trades >= 0,
                    let refunds = Int(field("退款订单总笔数")), refunds >= 0,
                    let receipt = YuanAmount.fen(field("商家实收（元）"), signed: true),
                    let fee = YuanAmount.fen(field("服务费（元）"), signed: true)
                else { throw .malformed(file: file, line: line.number, "the 合计 row's counts or amounts") }
                total = SummaryTotal(
                    line: line.number, tradeCount: trades, refundCount: refunds, receiptFen: receipt, feeFen: fee)
            }
            guard header != nil else { throw .truncated(file: file, line: lines.count, "no header") }
            guard let total else { throw .truncated(file: file, line: lines.count, "no 合计 row") }
            return total
        }
    }
}
