import CZlib

/// zlib's inflate, deflate and CRC-32 over byte arrays, bounded: nothing here grows past what the caller allows.
public enum Zlib {
    /// How the compressed bytes are wrapped.
    public enum Wrapping: Sendable {
        /// Bare deflate data (a zip entry).
        case raw
        /// One gzip member (RFC 1952), its own CRC-32 and length checked by zlib.
        case gzip

        var windowBits: Int32 { self == .raw ? -15 : 31 }
    }

    /// The CRC-32 (ISO-HDLC, as zip and gzip use it) of `bytes`.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt = 0
        var offset = 0
        // zlib's length is 32 bits wide: large inputs go in slices.
        while offset < bytes.count {
            let length = min(bytes.count - offset, 1 << 30)
            crc = bytes.withUnsafeBufferPointer { buffer in
                CZlib.crc32(crc, buffer.baseAddress! + offset, UInt32(length))
            }
            offset += length
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// Inflates `input` whole: the data must end exactly where the stream ends, and its output may not pass
    /// `maxBytes`. `sizeHint` (a zip entry's recorded size) sizes the first buffer.
    public static func inflate(_ input: ArraySlice<UInt8>, wrapping: Wrapping, sizeHint: Int = 0, maxBytes: Int)
        throws(ArchiveError) -> [UInt8]
    {
        guard input.count < Int(UInt32.max) else { throw .tooLarge("\(input.count) compressed bytes") }
        var stream = z_stream()
        guard inflateInit2_(&stream, wrapping.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw .malformed("zlib could not start inflating") }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: max(64, min(sizeHint > 0 ? sizeHint : input.count * 4, maxBytes)))
        var produced = 0
        let failure: ArchiveError? = input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = UInt32(source.count)
            while true {
                if produced == output.count {
                    guard output.count < maxBytes else { return .tooLarge("more than \(maxBytes) bytes inflated") }
                    output.append(contentsOf: repeatElement(0, count: min(output.count, maxBytes - output.count)))
                }
                let status = output.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress! + produced
                    stream.avail_out = UInt32(target.count - produced)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    produced = target.count - Int(stream.avail_out)
                    return status
                }
                switch status {
                case Z_STREAM_END:
                    return stream.avail_in == 0 ? nil : .malformed("\(stream.avail_in) bytes after the compressed data")
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_out == 0:
                    continue
                case Z_BUF_ERROR:
                    return .malformed("the compressed data ends early")
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    return .malformed("compressed data: \(message)")
                }
            }
        }
        if let failure { throw failure }
        output.removeSubrange(produced...)
        return output
    }

    /// Deflates `input` at zlib's default level (for the sandboxes, which write what providers publish).
    public static func deflate(_ input: [UInt8], wrapping: Wrapping) -> [UInt8] {
        var stream = z_stream()
        let started = deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, wrapping.windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        precondition(started == Z_OK, "zlib could not start deflating: \(started)")
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))))
        let written = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                let status = CZlib.deflate(&stream, Z_FINISH)
                precondition(status == Z_STREAM_END, "deflateBound was not enough: \(status)")
                return target.count - Int(stream.avail_out)
            }
        }
        output.removeSubrange(written...)
        return output
    }
}
