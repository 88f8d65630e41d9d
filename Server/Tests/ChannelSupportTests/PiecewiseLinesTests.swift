import Testing

@testable import ChannelSupport

@Suite("Piecewise lines: a file's lines as its pieces arrive, numbered, bounded, failures kept")
struct PiecewiseLinesTests {
    /// `text`'s bytes in pieces of `size`, then the end (or `failure`).
    static func pieces(_ text: String, size: Int, failure: ArchiveError? = nil) -> () throws(ArchiveError) -> [UInt8]? {
        let bytes = Array(text.utf8)
        var offset = 0
        return { () throws(ArchiveError) -> [UInt8]? in
            guard offset < bytes.count else {
                if let failure { throw failure }
                return nil
            }
            defer { offset = min(offset + size, bytes.count) }
            return Array(bytes[offset..<min(offset + size, bytes.count)])
        }
    }

    static func read(_ lines: PiecewiseLines) -> [String] {
        var read: [String] = []
        while let line = lines.next() { read.append("\(line.number):\(line.text)") }
        return read
    }

    @Test("lines cut across pieces come whole, numbered as in the file, blank ones counted and skipped")
    func whole() {
        let text = "first,1\r\n\r\nsecond line,2\nthird\n\nlast without a break"
        for size in [1, 3, 7, 64] {
            let lines = PiecewiseLines(pieces: Self.pieces(text, size: size))
            #expect(
                Self.read(lines) == ["1:first,1", "3:second line,2", "4:third", "6:last without a break"], "\(size)")
            #expect(lines.failure == nil && lines.count == 6)
        }
    }

    @Test("a line over the limit, a block the decoding refuses, a source that fails: the lines end, saying why")
    func failures() {
        let long = PiecewiseLines(
            pieces: Self.pieces("ok\n" + String(repeating: "x", count: 100), size: 8), maxLineBytes: 32)
        #expect(Self.read(long) == ["1:ok"] && long.failure == .lineTooLong(line: 2, limit: 32))
        let refused = PiecewiseLines(
            pieces: Self.pieces("a\nb\n", size: 2), decode: { $0.contains(UInt8(ascii: "b")) ? nil : $0 })
        #expect(Self.read(refused) == ["1:a"] && refused.failure == .notDecodable(line: 2))
        let broken = PiecewiseLines(pieces: Self.pieces("a\nb", size: 2, failure: .malformed("cut")))
        #expect(Self.read(broken) == ["1:a"] && broken.failure == .source(.malformed("cut")))
    }

    @Test(
        "more lines or blank lines than a statement holds end the lines at once; white space of any kind is a blank line"
    )
    func bounded() {
        let many = PiecewiseLines(pieces: Self.pieces(String(repeating: "row\n", count: 50), size: 16), maxLines: 20)
        #expect(Self.read(many).count <= 20 && many.failure == .tooManyLines(limit: 20))
        // A million blank lines (what a small zip inflates to) stop after the limit's block, not a million strings.
        let blank = PiecewiseLines(
            pieces: Self.pieces("head\n" + String(repeating: "\n", count: 1_000_000) + "tail\n", size: 1 << 16),
            maxBlankLines: 1000)
        #expect(Self.read(blank) == ["1:head"] && blank.failure == .tooManyBlankLines(limit: 1000))
        #expect(blank.count < 70_000, "stopped in the first block: \(blank.count)")
        let spaces = PiecewiseLines(pieces: Self.pieces("a\n \t\r\n\u{3000}\u{A0}\nb\n", size: 4))
        #expect(Self.read(spaces) == ["1:a", "4:b"])
    }

    @Test("a cancelled task's lines end, saying where")
    func cancelled() async {
        let task = Task {
            let lines = PiecewiseLines(pieces: Self.pieces(String(repeating: "row\n", count: 1000), size: 8))
            withUnsafeCurrentTask { $0?.cancel() }
            return (Self.read(lines), lines.failure)
        }
        let (read, failure) = await task.value
        #expect(read.isEmpty && failure == .cancelled(line: 0))
    }
}
