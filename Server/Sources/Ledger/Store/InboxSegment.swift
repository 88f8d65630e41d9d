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
    /// long), or nil when it holds none. One pass over the body. Where the segment `known` noted last stands in the
    /// body, followed by a `.`, that is the segment (its bytes are such a run, and the `.` ends it), found by one
    /// comparison of its bytes and with its digest; otherwise the run is read byte by byte and its digest computed.
    init?(splitting body: [UInt8], known: KnownInboxSegments? = nil) {
        guard let (start, end, digest) = body.withUnsafeBufferPointer({ Self.headerSegment(in: $0, known: known) })
        else { return nil }
        offset = start
        let bytes = Array(body[start..<end])
        self.bytes = bytes
        sha256 = digest ?? SHA256.hash(data: bytes).hexString
        var rest: [UInt8] = []
        rest.reserveCapacity(body.count - bytes.count)
        rest += body[..<start]
        rest += body[end...]
        self.rest = rest
    }

    /// Where the segment is in `body`: its first byte, the `.` after it, and its digest when it is `known`'s latest.
    /// One pass, over the buffer's bytes without an array's bounds checks (this scan of a submission's 3.8 KiB was
    /// 1.1% of the server's samples; reading the run is 1.7% of a fresh submission's instructions, comparing it 0.05%).
    private static func headerSegment(in body: UnsafeBufferPointer<UInt8>, known: KnownInboxSegments?)
        -> (start: Int, end: Int, sha256: String?)?
    {
        let (quote, dot) = (UInt8(ascii: "\""), UInt8(ascii: "."))
        var index = 1
        while index + 2 < body.count {
            guard body[index - 1] == quote, body[index] == UInt8(ascii: "e"), body[index + 1] == UInt8(ascii: "y"),
                body[index + 2] == UInt8(ascii: "J")
            else {
                index += 1
                continue
            }
            if let latest = known?.latest(in: body, at: index) { return (index, index + latest.count, latest.sha256) }
            var end = index
            while end < body.count, isBase64URL(body[end]) { end += 1 }
            if end < body.count, body[end] == dot, end - index >= minimumLength { return (index, end, nil) }
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

    /// The segment noted last, when `body` holds it at `start` and a `.` right after it: its length and digest.
    func latest(in body: UnsafeBufferPointer<UInt8>, at start: Int) -> (count: Int, sha256: String)? {
        known.withLock { known in
            guard let latest = known.latest, start >= 0, latest.bytes.count < body.count - start else { return nil }
            let end = start + latest.bytes.count
            guard body[end] == UInt8(ascii: "."),
                ByteScan.equal(latest.bytes[...], UnsafeBufferPointer(rebasing: body[start..<end]))
            else { return nil }
            return (latest.bytes.count, latest.sha256)
        }
    }

    func insert(_ segment: InboxSegment) {
        known.withLock { known in
            if known.digests.count >= Self.capacity { known.digests.removeAll() }
            known.digests.insert(segment.sha256)
            known.latest = (segment.bytes, segment.sha256)
        }
    }
}
