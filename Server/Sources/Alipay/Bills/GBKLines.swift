import ChannelSupport
import Foundation

/// The lines of one of a bill's GBK files, inflated from the zip and decoded a block of whole lines at a time (a GBK
/// byte pair never holds a line feed: its second byte is 0x40 or above, so a block cut after a line feed cuts no
/// character), numbered from 1, blank ones skipped. What goes wrong underneath (the zip's data, its CRC-32, a byte
/// that is not GBK) ends the lines and is kept in ``failure``. A class: the parser reads it while its owner keeps the
/// failure in view.
final class GBKLines: BillLines {
    private var entry: ZipArchive.EntryReader
    let file: String
    /// Inflated GBK bytes not decoded yet: the start of a line whose end has not been inflated.
    private var pending: [UInt8] = []
    /// The decoded block's lines (UTF-8), and the lines of the blocks before it.
    private var block = BillLineReader([])
    private var before = 0
    private var ended = false
    private(set) var failure: AlipayBillError?

    var count: Int { before + block.count }

    /// The longest line read: Alipay's are a few hundred bytes.
    static let maxLineBytes = 1 << 20

    init(_ entry: ZipArchive.EntryReader, file: String) {
        self.entry = entry
        self.file = file
    }

    func next() -> (number: Int, text: Substring)? {
        while failure == nil {
            if let line = block.next() { return (before + line.number, line.text) }
            guard !ended else { return nil }
            refill()
        }
        return nil
    }

    /// Inflates more and decodes every whole line it completes (all that is left, at the end).
    private func refill() {
        do {
            if let piece = try entry.next() { pending += piece } else { ended = true }
        } catch {
            failure = .archive(error)
            return
        }
        let cut = ended ? pending.count : (pending.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0)
        guard cut > 0 else {
            if pending.count > Self.maxLineBytes {
                failure = .malformed(file: file, line: count + 1, "a line over \(Self.maxLineBytes) bytes")
            }
            return
        }
        guard let text = String(data: Data(pending[..<cut]), encoding: AlipayBillArchive.encoding) else {
            failure = .encoding(file: file)
            return
        }
        before += block.count
        block = BillLineReader(Array(text.utf8))
        pending.removeSubrange(..<cut)
    }
}
