/// What the providers' statement files share once decoded to UTF-8: lines, comma-separated fields padded with
/// spaces or tabs, and a header row naming the columns (whose order the providers say may change).
public enum BillText {
    /// Comma-separated fields, spaces and tabs around each trimmed; with `backticks`, a leading backtick (WeChat Pay's
    /// guard against Excel) is dropped. Substrings of the line, split and trimmed on their bytes (a comma, a space, a
    /// tab and a backtick are never inside a UTF-8 character): Foundation's `trimmingCharacters` was 55% of WeChat
    /// Pay's parse in the profile of `ordersafe-bench statements`, and splitting by `Character` 40% of Alipay's
    /// (`--channel alipay`); only the columns read become strings.
    public static func fields(_ line: Substring, backticks: Bool) -> [Substring] {
        line.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { bytes in
            var field = bytes
            while let first = field.first, first == 0x20 || first == 0x09 { field = field.dropFirst() }
            while let last = field.last, last == 0x20 || last == 0x09 { field = field.dropLast() }
            if backticks, field.first == UInt8(ascii: "`") { field = field.dropFirst() }
            return Substring(field)
        }
    }

    /// Where each of `names` (a header row) stands, the first of a repeated name winning, and the first of
    /// `required` that is missing, if any.
    public static func columns(_ names: [String], required: [String]) -> (index: [String: Int], missing: String?) {
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        return (index, required.first { index[$0] == nil })
    }
}

/// A statement file's non-empty lines, numbered from 1 (blank lines counted, not returned), read one at a time.
public protocol BillLines {
    /// The next line with something on it, and its number in the file; nil at the end.
    mutating func next() -> (number: Int, text: Substring)?
    /// Lines read so far, blank ones included.
    var count: Int { get }
}

/// A file's non-empty lines, numbered from 1, found in its UTF-8 bytes (CRLF or LF; a BOM at the start skipped):
/// each line becomes a string only when it is read (the whole file as one string was as large again as the file).
public struct BillLineReader: BillLines {
    private let bytes: [UInt8]
    private var position: Int
    /// Lines read so far, blank ones included: the number of the last one returned.
    public private(set) var count = 0
    /// Blank lines passed over so far.
    public private(set) var blank = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    /// The next line with something on it, and its number in the file. A line of ASCII white space alone is passed
    /// over on its bytes (no string is made of it: a run of a billion blank lines costs a scan, not a billion strings).
    public mutating func next() -> (number: Int, text: Substring)? {
        while position < bytes.count {
            let end = bytes[position...].firstIndex(of: 0x0A) ?? bytes.count
            count += 1
            defer { position = end + 1 }
            if bytes[position..<end].allSatisfy(Self.isASCIISpace) {
                blank += 1
                continue
            }
            let last = bytes[end - 1] == 0x0D ? end - 1 : end
            let line = String(decoding: bytes[position..<last], as: UTF8.self)[...]
            if !line.allSatisfy(\.isWhitespace) { return (count, line) }
            blank += 1
        }
        return nil
    }

    /// Space, tab, CR, vertical tab and form feed.
    private static func isASCIISpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte) && byte != 0x0A
    }
}
