import ChannelSupport
import Foundation

/// What WeChat Pay's bills share: lines of UTF-8 text, comma-separated fields, each field of the detail and summary
/// rows prefixed with a backtick (so that Excel keeps long numbers whole); no quoting.
enum WeChatPayBillText {
    /// The lines of `bytes` (UTF-8), numbered from 1.
    static func lines(_ bytes: [UInt8]) -> BillLineReader { BillLineReader(bytes) }

    /// The detail and summary rows' fields (see ``BillText/fields(_:backticks:)``).
    static func fields(_ line: Substring, backticks: Bool) -> [Substring] {
        BillText.fields(line, backticks: backticks)
    }

    /// Where each column of a detail header stands; refused when a column of `required` is missing.
    static func columns(_ names: [String], required: [String]) throws(WeChatPayBillError) -> [String: Int] {
        let (index, missing) = BillText.columns(names, required: required)
        if let missing { throw .malformed(line: 1, "the detail header has no column \(missing)") }
        return index
    }

    /// A bill's summary block: the header `header` (read already), its one row, and nothing after it but blank lines.
    /// The row's fields are read by their header names: counts and amounts in yuan, refused naming the line.
    struct Summary {
        let headerLine: Int
        let line: Int
        let names: [String]
        let fields: [Substring]

        init(header: (number: Int, text: Substring)?, rest lines: inout some BillLines) throws(WeChatPayBillError) {
            guard let header else { throw .truncated(line: lines.count + 1, "no summary: the file ends in its rows") }
            names = WeChatPayBillText.fields(header.text, backticks: true).map(String.init)
            guard let row = lines.next() else {
                throw .truncated(line: header.number + 1, "the summary header has no summary row")
            }
            fields = WeChatPayBillText.fields(row.text, backticks: true)
            guard fields.count == names.count else {
                throw .malformed(line: row.number, "the summary has \(fields.count) fields for \(names.count) names")
            }
            while let extra = lines.next() {
                guard extra.text.allSatisfy(\.isWhitespace) else {
                    throw .malformed(line: extra.number, "something follows the summary")
                }
            }
            headerLine = header.number
            line = row.number
        }

        func text(_ name: String) throws(WeChatPayBillError) -> Substring {
            guard let position = names.firstIndex(of: name) else {
                throw .malformed(line: headerLine, "the summary header has no column \(name)")
            }
            return fields[position]
        }

        /// A count as the bills write it: `20`, or `20.0` as WeChat Pay's fund-flow example does (资金账单结构说明,
        /// https://pay.weixin.qq.com/docs/merchant/products/bill-download/structure/fund-bill.html: `` `20.0,`17.0 ``);
        /// a fraction that is not zero is no count.
        func count(_ name: String) throws(WeChatPayBillError) -> Int {
            let written = try text(name)
            let parts = written.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 1 || ((1...2).contains(parts[1].count) && parts[1].allSatisfy { $0 == "0" }),
                parts[0].allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(parts[0])
            else {
                throw .malformed(line: line, "\(name) is not a count")
            }
            return value
        }

        func fen(_ name: String, signed: Bool = false, decimals: Int = 2) throws(WeChatPayBillError) -> Int64 {
            try WeChatPayBillText.fen(
                String(try text(name)), named: name, line: line, signed: signed, decimals: decimals)
        }
    }

    /// The fen a field of line `line` (column `name`) writes, refused naming them: not an amount, or finer than the
    /// fen (a fee of `0.05940`: the ledger keeps fen, and WeChat Pay's bills round each fee to the fen).
    static func fen(_ text: String, named name: String, line: Int, signed: Bool, decimals: Int)
        throws(WeChatPayBillError) -> Int64
    {
        switch YuanAmount.read(text, signed: signed, decimals: decimals) {
        case .fen(let fen): return fen
        case .finerThanFen:
            throw .malformed(line: line, "\(name) '\(text.prefix(32))' is finer than the fen, which the ledger keeps")
        case .notAnAmount:
            throw .malformed(line: line, "\(name) '\(text.prefix(32))' is not an amount in yuan")
        }
    }
}
