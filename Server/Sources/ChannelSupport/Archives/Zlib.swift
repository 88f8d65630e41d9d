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

    /// The CRC-32 (ISO-HDLC, as zip and gzip use it) of `bytes`, continuing from the CRC-32 of what came before them.
    public static func crc32(_ bytes: [UInt8], continuing previous: UInt32 = 0) -> UInt32 {
        var crc = UInt(previous)
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
    /// `maxBytes`. ``Inflater`` gives it piece by piece.
    public static func inflate(_ input: ArraySlice<UInt8>, wrapping: Wrapping, maxBytes: Int) throws(ArchiveError)
        -> [UInt8]
    {
        let inflater = try Inflater(input, wrapping: wrapping, maxBytes: maxBytes)
        var output: [UInt8] = []
        while let piece = try inflater.next() { output += piece }
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
