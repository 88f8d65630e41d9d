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
    /// The decoded block (UTF-8) and where the next line starts in it.
    private var block: [UInt8] = []
    private var position = 0
    private var ended = false
    private(set) var count = 0
    private(set) var failure: AlipayBillError?

    /// The longest line read: Alipay's are a few hundred bytes.
    static let maxLineBytes = 1 << 20

    init(_ entry: ZipArchive.EntryReader, file: String) {
        self.entry = entry
        self.file = file
    }

    func next() -> (number: Int, text: Substring)? {
        while failure == nil {
            if position < block.count {
                let end = block[position...].firstIndex(of: 0x0A) ?? block.count
                let last = end > position && block[end - 1] == 0x0D ? end - 1 : end
                let line = String(decoding: block[position..<last], as: UTF8.self)[...]
                position = end + 1
                count += 1
                if !line.allSatisfy(\.isWhitespace) { return (count, line) }
                continue
            }
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
        block = Array(text.utf8)
        position = 0
        pending.removeSubrange(..<cut)
    }
}
