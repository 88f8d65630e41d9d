import ChannelSupport
import Foundation

extension AlipayTradeBill {
    /// The detail's footer: `#交易合计：N笔，商家实收共X元，…` and `#退款合计：N笔，商家实收退款共X元，…`.
    struct Footer {
        var trades: (count: Int, fen: Int64)
        var refunds: (count: Int, fen: Int64)
        var tradesLine: Int
        var refundsLine: Int
    }

    /// The detail file, line by line: preamble, header, rows, footer.
    struct DetailReader<Lines: BillLines> {
        let file: String
        var lines: Lines
        private var names: [String] = []
        private var headerLine = 0

        init(file: String, lines: Lines) {
            self.file = file
            self.lines = lines
        }

        /// The `#` lines up to the list's start marker: the account and the first day.
        mutating func preamble() throws(AlipayBillError) -> (account: String?, startDay: String?) {
            var account: String?
            var startDay: String?
            while let line = lines.next() {
                guard line.text.hasPrefix("#") else {
                    throw .malformed(file: file, line: line.number, "a row before the 业务明细列表 marker")
                }
                if line.text.hasPrefix("#-"), line.text.contains("业务明细列表") { return (account, startDay) }
                if line.text.hasPrefix("#账号：[") {
                    account = AlipayTradeBill.bracketed(line.text)
                } else if line.text.hasPrefix("#起始日期：[") {
                    startDay = AlipayTradeBill.bracketed(line.text).flatMap(AlipayTradeBill.day)
                }
            }
            throw .truncated(file: file, line: lines.count, "no 业务明细列表 marker")
        }

        /// The column names; refused when one the comparison needs is missing.
        mutating func header() throws(AlipayBillError) -> [String: Int] {
            guard let line = lines.next() else { throw .truncated(file: file, line: lines.count, "no header") }
            names = BillText.fields(line.text, backticks: false).map(String.init)
            headerLine = line.number
            let (index, missing) = BillText.columns(names, required: AlipayTradeBill.columns)
            if let missing { throw .malformed(file: file, line: line.number, "the header has no column \(missing)") }
            return index
        }

        /// The next row; nil at the list's end marker.
        mutating func nextRow(index: [String: Int]) throws(AlipayBillError) -> Row? {
            guard let line = lines.next() else {
                throw .truncated(file: file, line: lines.count, "no 业务明细列表结束 marker")
            }
            guard line.text.hasPrefix("#") else { return try row(line, index: index) }
            guard line.text.contains("业务明细列表结束") else {
                throw .malformed(file: file, line: line.number, "a # line inside the list")
            }
            return nil
        }

        private func row(_ line: (number: Int, text: Substring), index: [String: Int]) throws(AlipayBillError) -> Row {
            var fields = BillText.fields(line.text, backticks: false)
            // 备注, the last column, is free text: commas in it are its own.
            if fields.count > names.count, names.last == "备注" {
                let remark = line.text.split(
                    separator: ",", maxSplits: names.count - 1, omittingEmptySubsequences: false)
                fields = Array(fields.prefix(names.count - 1)) + [remark[names.count - 1]]
            }
            guard fields.count == names.count else {
                throw .malformed(file: file, line: line.number, "\(fields.count) fields for \(names.count) columns")
            }
            func text(_ column: String) -> String { String(fields[index[column]!]) }
            func fen(_ column: String) throws(AlipayBillError) -> Int64 {
                guard let value = YuanAmount.fen(text(column), signed: true) else {
                    throw .malformed(file: file, line: line.number, "\(column) is not an amount in yuan")
                }
                return value
            }
            guard let kind = Row.Kind(rawValue: text("业务类型")) else {
                throw .malformed(file: file, line: line.number, "业务类型 '\(text("业务类型").prefix(16))'")
            }
            guard let finishedAt = BeijingTime.date(text("完成时间")) else {
                throw .malformed(file: file, line: line.number, "完成时间 is not yyyy-MM-dd HH:mm:ss")
            }
            let row = Row(
                line: line.number, kind: kind, tradeNo: text("支付宝交易号"), outTradeNo: text("商户订单号"),
                finishedAt: finishedAt, orderFen: try fen("订单金额（元）"), receiptFen: try fen("商家实收（元）"),
                feeFen: try fen("服务费（元）"), refundRequestNo: text("退款批次号/请求号"))
            guard !row.tradeNo.isEmpty, !row.outTradeNo.isEmpty else {
                throw .malformed(file: file, line: line.number, "no 支付宝交易号 or 商户订单号")
            }
            switch kind {
            case .trade:
                guard row.orderFen > 0, (0...row.orderFen).contains(row.receiptFen) else {
                    throw .malformed(file: file, line: line.number, "a trade's amounts are out of range")
                }
            case .refund:
                guard row.receiptFen < 0, !row.refundRequestNo.isEmpty else {
                    throw .malformed(
                        file: file, line: line.number, "a refund needs a negative 商家实收 and its request number")
                }
            }
            return row
        }

        mutating func footer() throws(AlipayBillError) -> Footer {
            var trades: (count: Int, fen: Int64, line: Int)?
            var refunds: (count: Int, fen: Int64, line: Int)?
            while let line = lines.next() {
                guard line.text.hasPrefix("#") else {
                    throw .malformed(file: file, line: line.number, "a row after the list")
                }
                if line.text.hasPrefix("#交易合计：") {
                    let (count, fen) = try sums(line, prefix: "#交易合计：", amount: "商家实收共")
                    trades = (count, fen, line.number)
                } else if line.text.hasPrefix("#退款合计：") {
                    let (count, fen) = try sums(line, prefix: "#退款合计：", amount: "商家实收退款共")
                    refunds = (count, fen, line.number)
                }
            }
            guard let trades else { throw .truncated(file: file, line: lines.count, "no #交易合计 line") }
            guard let refunds else { throw .truncated(file: file, line: lines.count, "no #退款合计 line") }
            return Footer(
                trades: (trades.count, trades.fen), refunds: (refunds.count, refunds.fen), tradesLine: trades.line,
                refundsLine: refunds.line)
        }

        private func sums(_ line: (number: Int, text: Substring), prefix: String, amount: String)
            throws(AlipayBillError) -> (Int, Int64)
        {
            let parts = line.text.dropFirst(prefix.count).split(separator: "，")
            guard parts.count >= 2, parts[0].hasSuffix("笔"), let count = Int(parts[0].dropLast()), count >= 0,
                parts[1].hasPrefix(amount), parts[1].hasSuffix("元"),
                let fen = YuanAmount.fen(String(parts[1].dropFirst(amount.count).dropLast()), signed: true)
            else { throw .malformed(file: file, line: line.number, "not \(prefix)N笔，\(amount)X元") }
            return (count, fen)
        }
    }
}

extension AlipayTradeBill {
    /// What stands between the first `[` and the following `]`.
    static func bracketed(_ text: Substring) -> String? {
        guard let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]") else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    /// `2017年08月31日 00:00:00` → `2017-08-31`.
    static func day(_ text: String) -> String? {
        let digits = text.split { !$0.isASCII || !$0.isNumber }
        guard digits.count >= 3, digits[0].count == 4, digits[1].count == 2, digits[2].count == 2 else {
            return nil
        }
        return "\(digits[0])-\(digits[1])-\(digits[2])"
    }
}
