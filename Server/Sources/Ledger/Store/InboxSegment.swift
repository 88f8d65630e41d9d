import Crypto
import Foundation
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
    /// long), or nil when it holds none. One pass over the body.
    init?(splitting body: [UInt8]) {
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
            while end < body.count, Self.isBase64URL(body[end]) { end += 1 }
            if end < body.count, body[end] == dot, end - index >= Self.minimumLength {
                offset = index
                bytes = Array(body[index..<end])
                sha256 = SHA256.hash(data: bytes).hexString
                rest = Array(body[..<index]) + body[end...]
                return
            }
            index = end + 1
        }
        return nil
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}

/// The segments this process knows `inbox_segments` holds (committed): a submission whose segment is among them
/// writes no row for it, so a submission costs the statements it did before segments were kept apart. At most
/// ``capacity`` (a few signing chains are in use at a time); forgotten all at once beyond it.
final class KnownInboxSegments: Sendable {
    static let capacity = 64
    private let known = Mutex(Set<String>())

    func contains(_ sha256: String) -> Bool { known.withLock { $0.contains(sha256) } }

    func insert(_ sha256: String) {
        known.withLock { known in
            if known.count >= Self.capacity { known.removeAll() }
            known.insert(sha256)
        }
    }
}
