import ChannelSupport

/// Why an Alipay bill was refused: never a partial reading.
public enum AlipayBillError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The download is not a zip Alipay would write (see ``ArchiveError``).
    case archive(ArchiveError)
    /// The zip lacks a file, or holds two where one is expected.
    case files(String)
    /// A file is not GBK (GB 18030) text.
    case encoding(file: String)
    /// A line of a file is not what Alipay writes.
    case malformed(file: String, line: Int, String)
    /// A file stops before its end markers.
    case truncated(file: String, line: Int, String)
    /// The rows do not add up to the file's own totals.
    case totals(file: String, line: Int, String)

    public var description: String {
        switch self {
        case .archive(let error): "Alipay bill: \(error)"
        case .files(let detail): "Alipay bill: \(detail)"
        case .encoding(let file): "Alipay bill: \(file) is not GBK text"
        case .malformed(let file, let line, let detail): "Alipay bill: \(file) line \(line): \(detail)"
        case .truncated(let file, let line, let detail): "Alipay bill: \(file) cut short at line \(line): \(detail)"
        case .totals(let file, let line, let detail): "Alipay bill: \(file) line \(line): \(detail)"
        }
    }
}
