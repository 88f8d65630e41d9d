import ChannelSupport
import Foundation

/// The lines of one of a bill's GBK files, inflated from the zip and decoded a block of whole lines at a time
/// (``PiecewiseLines``), numbered from 1, blank ones skipped; what goes wrong underneath (the zip's data, its CRC-32,
/// a byte that is not GBK) ends the lines and is kept in ``failure``, naming the file.
final class GBKLines: BillLines {
    private let lines: PiecewiseLines
    let file: String

    /// The longest line read: Alipay's are a few hundred bytes.
    static let maxLineBytes = 1 << 20

    init(_ entry: ZipArchive.EntryReader, file: String) {
        var entry = entry
        lines = PiecewiseLines(
            pieces: { () throws(ArchiveError) -> [UInt8]? in try entry.next() },
            decode: { String(data: Data($0), encoding: AlipayBillArchive.encoding).map { Array($0.utf8) } },
            maxLineBytes: Self.maxLineBytes)
        self.file = file
    }

    var count: Int { lines.count }

    func next() -> (number: Int, text: Substring)? { lines.next() }

    /// Why the lines ended early, if they did.
    var failure: AlipayBillError? {
        switch lines.failure {
        case nil: nil
        case .source(let error): .archive(error)
        case .lineTooLong(let line, let limit): .malformed(file: file, line: line, "a line over \(limit) bytes")
        case .notDecodable: .encoding(file: file)
        case .tooManyLines, .tooManyBlankLines, .cancelled(_):
            .malformed(file: file, line: lines.count, lines.failure.map { "\($0)" } ?? "")
        }
    }
}
