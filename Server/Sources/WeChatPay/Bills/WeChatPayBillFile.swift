import ChannelSupport

/// A bill as downloaded, its bytes as they came (gzipped when it was asked for so) and already checked against
/// WeChat Pay's digest: read again a piece at a time whenever it is read, so that a day's bill of a million lines
/// is never whole in memory.
public struct WeChatPayBillFile: Sendable {
    /// The bytes as downloaded.
    public let bytes: [UInt8]
    public let gzip: Bool
    /// The most the bill may inflate to.
    public let maxBytes: Int

    public init(bytes: [UInt8], gzip: Bool, maxBytes: Int = 1 << 30) {
        self.bytes = bytes
        self.gzip = gzip
        self.maxBytes = maxBytes
    }

    /// How much is read at a time from a bill that came uncompressed.
    static let pieceBytes = 1 << 16

    /// The bill's bytes a piece at a time (inflated as they are asked for), nil at the end.
    public func pieces() throws(ArchiveError) -> () throws(ArchiveError) -> [UInt8]? {
        if gzip {
            let inflater = try Inflater(bytes[...], wrapping: .gzip, maxBytes: maxBytes)
            return { () throws(ArchiveError) -> [UInt8]? in try inflater.next() }
        }
        var offset = 0
        let bytes = bytes
        return {
            guard offset < bytes.count else { return nil }
            let end = min(offset + Self.pieceBytes, bytes.count)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    /// The bill's lines (UTF-8), read as they inflate.
    public func lines() throws(ArchiveError) -> PiecewiseLines {
        PiecewiseLines(pieces: try pieces())
    }

    /// The whole bill.
    public func whole() throws(ArchiveError) -> [UInt8] {
        guard gzip else { return bytes }
        return try Zlib.inflate(bytes[...], wrapping: .gzip, maxBytes: maxBytes)
    }
}
