/// The lines of a file that arrives a piece at a time (inflated as it is read: a large file is never whole in
/// memory), decoded to UTF-8 a block of whole lines at a time, numbered from 1, blank ones skipped. The decoding must
/// never see a line feed inside a character (true of UTF-8, and of GBK: a pair's second byte is 0x40 or above). What
/// goes wrong underneath (the compressed data, its checksum, a byte the decoding refuses, a line too long, more lines
/// or blank lines than a statement holds, the task cancelled) ends the lines and is kept in ``failure``: work is
/// bounded by what a real statement needs, not only by bytes. A class: the parser reads it while its owner keeps the
/// failure in view.
public final class PiecewiseLines: BillLines {
    /// Why the lines ended early.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The pieces could not be read.
        case source(ArchiveError)
        /// Line `line` is longer than the limit.
        case lineTooLong(line: Int, limit: Int)
        /// A block around line `line` is not in the file's encoding.
        case notDecodable(line: Int)
        /// More lines than `limit` (blank ones counted), or more blank lines than `limit`.
        case tooManyLines(limit: Int)
        case tooManyBlankLines(limit: Int)
        /// The task reading the lines was cancelled (a run's time box ran out).
        case cancelled(line: Int)

        public var description: String {
            switch self {
            case .source(let error): error.description
            case .lineTooLong(let line, let limit): "line \(line): longer than \(limit) bytes"
            case .notDecodable(let line): "from line \(line): not in the file's encoding"
            case .tooManyLines(let limit): "more than \(limit) lines: no statement is that long"
            case .tooManyBlankLines(let limit): "more than \(limit) blank lines: no statement holds that many"
            case .cancelled(let line): "stopped at line \(line): the run's time was up"
            }
        }
    }

    /// The most lines a file may have: a day of the busiest merchant's bill is a few million rows (a row is 150 to
    /// 300 bytes, and a bill inflates to at most 1 GiB); twenty million leaves a wide margin.
    public static let defaultMaxLines = 20_000_000
    /// The most blank lines: real bills have a handful (between the detail and its summary, at the end).
    public static let defaultMaxBlankLines = 10_000

    private let pieces: () throws(ArchiveError) -> [UInt8]?
    private let decode: (([UInt8]) -> [UInt8]?)?
    private let maxLineBytes: Int
    private let maxLines: Int
    private let maxBlankLines: Int
    /// Bytes not decoded yet: the start of a line whose end has not arrived.
    private var pending: [UInt8] = []
    /// The decoded block's lines, and the lines of the blocks before it.
    private var block = BillLineReader([])
    private var before = 0
    private var blankBefore = 0
    private var ended = false
    public private(set) var failure: Failure?

    public var count: Int { before + block.count }

    /// - Parameters:
    ///   - pieces: the file's next bytes, nil at its end.
    ///   - decode: a block of whole lines to UTF-8 (nil when a byte is not in the encoding); none: UTF-8 already.
    public init(
        pieces: @escaping () throws(ArchiveError) -> [UInt8]?, decode: (([UInt8]) -> [UInt8]?)? = nil,
        maxLineBytes: Int = 1 << 20, maxLines: Int = defaultMaxLines, maxBlankLines: Int = defaultMaxBlankLines
    ) {
        self.pieces = pieces
        self.decode = decode
        self.maxLineBytes = maxLineBytes
        self.maxLines = maxLines
        self.maxBlankLines = maxBlankLines
    }

    public func next() -> (number: Int, text: Substring)? {
        while failure == nil {
            let line = block.next()
            if count > maxLines {
                failure = .tooManyLines(limit: maxLines)
            } else if blankBefore + block.blank > maxBlankLines {
                failure = .tooManyBlankLines(limit: maxBlankLines)
            } else if let line {
                return (before + line.number, line.text)
            } else if ended {
                return nil
            } else if Task.isCancelled {
                failure = .cancelled(line: count)
            } else {
                refill()
            }
        }
        return nil
    }

    /// Reads another piece and decodes every whole line it completes (all that is left, at the end).
    private func refill() {
        do {
            if let piece = try pieces() { pending += piece } else { ended = true }
        } catch {
            failure = .source(error)
            return
        }
        let cut = ended ? pending.count : (pending.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0)
        guard cut > 0 else {
            if pending.count > maxLineBytes { failure = .lineTooLong(line: count + 1, limit: maxLineBytes) }
            return
        }
        let whole = Array(pending[..<cut])
        guard let text = decode.map({ $0(whole) }) ?? whole else {
            failure = .notDecodable(line: count + 1)
            return
        }
        before += block.count
        blankBefore += block.blank
        block = BillLineReader(text)
        pending.removeSubrange(..<cut)
    }
}
