import CZlib

/// Inflates one deflate stream a piece at a time, so that a large file is never whole in memory: each call to
/// ``next(chunk:)`` returns the next piece of output, nil at the end. The data must end where the stream ends, and
/// the output may pass neither `maxBytes` nor `maxRatio` times the compressed size (past the first MiB): a deflate
/// stream can inflate a thousandfold, which is a bomb, not a file.
public final class Inflater {
    private var stream = z_stream()
    private let input: ArraySlice<UInt8>
    private var consumed = 0
    private var finished = false
    private let maxBytes: Int
    /// Bytes produced so far.
    private var produced = 0

    /// Statements deflate five to fifteen times (CSV of ids, dates and amounts; measured on the sandboxes' bills and
    /// real samples); a hundred leaves a wide margin.
    public static let defaultMaxRatio = 100
    /// What any stream may inflate to, whatever its ratio (a short stream may be mostly repeated padding).
    public static let ratioFloor = 1 << 20

    public init(
        _ input: ArraySlice<UInt8>, wrapping: Zlib.Wrapping, maxBytes: Int, maxRatio: Int = defaultMaxRatio
    ) throws(ArchiveError) {
        guard input.count < Int(UInt32.max) else { throw .tooLarge("\(input.count) compressed bytes") }
        self.input = input
        let (byRatio, overflow) = input.count.multipliedReportingOverflow(by: max(1, maxRatio))
        self.maxBytes = min(maxBytes, overflow ? maxBytes : max(Self.ratioFloor, byRatio))
        guard inflateInit2_(&stream, wrapping.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw .malformed("zlib could not start inflating") }
    }

    deinit { inflateEnd(&stream) }

    /// The next piece of output (at most `chunk` bytes, never empty), or nil once the stream has ended.
    public func next(chunk: Int = 1 << 16) throws(ArchiveError) -> [UInt8]? {
        while !finished {
            var output = [UInt8](repeating: 0, count: chunk)
            let (status, written) = step(into: &output)
            switch status {
            case Z_STREAM_END:
                finished = true
                guard consumed == input.count else {
                    throw .malformed("\(input.count - consumed) bytes after the compressed data")
                }
            case Z_OK:
                break
            case Z_BUF_ERROR where written > 0:
                break
            case Z_BUF_ERROR:
                throw .malformed("the compressed data ends early")
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw .malformed("compressed data: \(message)")
            }
            produced += written
            guard produced <= maxBytes else {
                throw .tooLarge(
                    "more than \(maxBytes) bytes inflated from \(input.count) (a ratio or size no file has)")
            }
            if written > 0 {
                output.removeSubrange(written...)
                return output
            }
        }
        return nil
    }

    /// One call of zlib's inflate from where the input was left into `output`.
    private func step(into output: inout [UInt8]) -> (status: Int32, written: Int) {
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress.map { $0 + consumed })
                stream.avail_in = UInt32(source.count - consumed)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                consumed = source.count - Int(stream.avail_in)
                return (status, target.count - Int(stream.avail_out))
            }
        }
    }
}
