import ChannelSupport
import Foundation

/// What WeChat Pay's bills share: lines of UTF-8 text, comma-separated fields, each field of the detail and summary
/// rows prefixed with a backtick (so that Excel keeps long numbers whole); no quoting.
enum WeChatPayBillText {
    /// The lines of `bytes` (UTF-8; CRLF or LF; a BOM at the start skipped), numbered from 1, empty ones skipped
    /// until the summary.
    static func lines(_ bytes: [UInt8]) -> LineReader { LineReader(bytes) }

    /// Comma-separated fields, spaces and tabs around each trimmed; in detail and summary rows each starts with a
    /// backtick, which is dropped. Substrings of the line, trimmed by their bytes: Foundation's `trimmingCharacters` was
    /// 55% of the parse in the profile of `ordersafe-bench statements`; only the columns read become strings.
    static func fields(_ line: Substring, backticks: Bool) -> [Substring] {
        line.split(separator: ",", omittingEmptySubsequences: false).map { field in
            var trimmed = field
            while let first = trimmed.utf8.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
            while let last = trimmed.utf8.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
            return backticks && trimmed.utf8.first == UInt8(ascii: "`") ? trimmed.dropFirst() : trimmed
        }
    }

    /// A file's non-empty lines, numbered, found in its bytes: each line becomes a string only when it is read
    /// (the whole file as one string was as large again as the file).
    struct LineReader {
        private let bytes: [UInt8]
        private var position: Int
        private(set) var count = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        }

        mutating func next() -> (number: Int, text: Substring)? {
            while position < bytes.count {
                let end = bytes[position...].firstIndex(of: 0x0A) ?? bytes.count
                let last = end > position && bytes[end - 1] == 0x0D ? end - 1 : end
                let line = String(decoding: bytes[position..<last], as: UTF8.self)[...]
                position = end + 1
                count += 1
                if !line.allSatisfy(\.isWhitespace) { return (count, line) }
            }
            return nil
        }
    }

    /// Where each of `names` (a detail header) stands, the first of a repeated name winning; refused when a column
    /// of `required` is missing.
    static func columns(_ names: [String], required: [String]) throws(WeChatPayBillError) -> [String: Int] {
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        for column in required where index[column] == nil {
            throw .malformed(line: 1, "the detail header has no column \(column)")
        }
        return index
    }

    /// A bill's summary block: the header `header` (read already), its one row, and nothing after it but blank lines.
    /// The row's fields are read by their header names: counts and amounts in yuan, refused naming the line.
    struct Summary {
        let headerLine: Int
        let line: Int
        let names: [String]
        let fields: [Substring]

        init(header: (number: Int, text: Substring)?, rest lines: inout LineReader) throws(WeChatPayBillError) {
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

        func count(_ name: String) throws(WeChatPayBillError) -> Int {
            guard let value = Int(try text(name)), value >= 0 else {
                throw .malformed(line: line, "\(name) is not a count")
            }
            return value
        }

        func fen(_ name: String, signed: Bool = false) throws(WeChatPayBillError) -> Int64 {
            guard let value = YuanAmount.fen(String(try text(name)), signed: signed) else {
                throw .malformed(line: line, "\(name) is not an amount in yuan")
            }
            return value
        }
    }
}
