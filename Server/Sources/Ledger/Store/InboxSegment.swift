import Crypto
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import Synchronization

/// The part of a verified signal's body the inbox keeps once for all the entries that carry it: the header segment
/// of its JWS (`{"alg":"ES256","x5c":[…]}` in base64url), which is Apple's certificate chain, the same 3 KiB in every
/// transaction one key signs, of a submission's 3.8 KiB. The entry keeps the rest of the body and where the segment
/// stood; the view `inbox_bodies` puts them together again, byte for byte as received.
///
/// Only signals verified before they are stored are split (a submission's, stored as applied): a forged header costs
/// a row of its own in `inbox_segments`, which nothing purges, so an unverified one never gets there.
struct InboxSegment: Sendable, Equatable {
    /// How many bytes of the body came before the segment.
    let offset: Int
    /// The segment.
    let bytes: [UInt8]
    /// Its SHA-256, in lowercase hex: its key in `inbox_segments`.
    let sha256: String
    /// The body without it.
    let rest: [UInt8]

    /// Segments shorter than this are left in their bodies (a key's chain is ~3 KiB; a row of its own would save
    /// nothing on a short one).
    static let minimumLength = 1024

    /// The first JWS header segment of `body` (a base64url run from `"eyJ` to a `.`, at least ``minimumLength``
    /// long), or nil when it holds none. One pass over the body; the segment's digest is `known`'s when it is the
    /// segment stored last (one comparison of its bytes), and computed otherwise.
    init?(splitting body: [UInt8], known: KnownInboxSegments? = nil) {
        guard let (start, end) = body.withUnsafeBufferPointer(Self.headerSegment) else { return nil }
        offset = start
        let bytes = Array(body[start..<end])
        self.bytes = bytes
        sha256 = known?.digest(ofLatest: bytes) ?? SHA256.hash(data: bytes).hexString
        var rest: [UInt8] = []
        rest.reserveCapacity(body.count - bytes.count)
        rest += body[..<start]
        rest += body[end...]
        self.rest = rest
    }

    /// Where the segment is in `body`: its first byte and the `.` after it. One pass, over the buffer's bytes without
    /// an array's bounds checks (this scan of a submission's 3.8 KiB was 1.1% of the server's samples).
    private static func headerSegment(in body: UnsafeBufferPointer<UInt8>) -> (start: Int, end: Int)? {
        let (quote, dot) = (UInt8(ascii: "\""), UInt8(ascii: "."))
        var index = 1
        while index + 2 < body.count {
            guard body[index - 1] == quote, body[index] == UInt8(ascii: "e"), body[index + 1] == UInt8(ascii: "y"),
                body[index + 2] == UInt8(ascii: "J")
            else {
                index += 1
                continue
            }
            var end = index
            while end < body.count, isBase64URL(body[end]) { end += 1 }
            if end < body.count, body[end] == dot, end - index >= minimumLength { return (index, end) }
            index = end + 1
        }
        return nil
    }

    /// Whether `byte` is in base64url's alphabet (`A-Z`, `a-z`, `0-9`, `-`, `_`): a bit of a 128-bit mask of ASCII,
    /// two words, not a chain of range comparisons.
    private static func isBase64URL(_ byte: UInt8) -> Bool {
        // Bits 45 (`-`) and 48-57 (`0-9`) of ASCII's first 64; 65-90 (`A-Z`), 95 (`_`) and 97-122 (`a-z`) of the next.
        let (low, high): (UInt64, UInt64) = (0x03FF_2000_0000_0000, 0x07FF_FFFE_87FF_FFFE)
        let word = byte < 64 ? low : byte < 128 ? high : 0
        return word &>> (byte & 63) & 1 == 1
    }
}

/// The segments this process knows `inbox_segments` holds (committed): a submission whose segment is among them
/// writes no row for it, so a submission costs the statements it did before segments were kept apart. At most
/// ``capacity`` digests (a few signing chains are in use at a time); forgotten all at once beyond it. The segment
/// noted last is kept whole too: the next submissions almost always carry the same chain, whose digest is then
/// known by comparing its bytes instead of hashing them.
final class KnownInboxSegments: Sendable {
    static let capacity = 64
    private let known = Mutex(Known())

    private struct Known {
        var digests: Set<String> = []
        var latest: (bytes: [UInt8], sha256: String)?
    }

    func contains(_ sha256: String) -> Bool { known.withLock { $0.digests.contains(sha256) } }

    /// The digest of `bytes` if they are the segment noted last.
    func digest(ofLatest bytes: [UInt8]) -> String? {
        known.withLock { known in known.latest.flatMap { ByteScan.equal($0.bytes[...], bytes[...]) ? $0.sha256 : nil } }
    }

    func insert(_ segment: InboxSegment) {
        known.withLock { known in
            if known.digests.count >= Self.capacity { known.digests.removeAll() }
            known.digests.insert(segment.sha256)
            known.latest = (segment.bytes, segment.sha256)
        }
    }
}
