import ChannelSupport
import Foundation

/// The lines of one of a bill's GBK files, inflated from the zip and decoded one line at a time (a GBK byte pair
/// never holds a line feed: its second byte is 0x40 or above), numbered from 1, blank ones skipped. What goes wrong
/// underneath (the zip's data, its CRC-32, a byte that is not GBK) ends the lines and is kept in ``failure``. A class:
/// the parser reads it while its owner keeps the failure in view.
final class GBKLines: BillLines {
    private var entry: ZipArchive.EntryReader
    let file: String
    private var buffer: [UInt8] = []
    private var start = 0
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
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = buffer[start..<newline]
                start = newline + 1
                if let text = decode(line) { return text }
                continue
            }
            if ended {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                if let text = decode(line) { return text }
                continue
            }
            buffer.removeSubrange(0..<start)
            start = 0
            do {
                if let piece = try entry.next() { buffer += piece } else { ended = true }
            } catch {
                failure = .archive(error)
            }
            if buffer.count > Self.maxLineBytes {
                failure = .malformed(file: file, line: count + 1, "a line over \(Self.maxLineBytes) bytes")
            }
        }
        return nil
    }

    /// A line's text without its carriage return; nil for a blank line (counted) or bytes that are not GBK.
    private func decode(_ bytes: ArraySlice<UInt8>) -> (number: Int, text: Substring)? {
        count += 1
        let body = bytes.last == 0x0D ? bytes.dropLast() : bytes
        guard let text = String(data: Data(body), encoding: AlipayBillArchive.encoding) else {
            failure = .encoding(file: file)
            return nil
        }
        return text.allSatisfy(\.isWhitespace) ? nil : (count, text[...])
    }
}
