import Crypto
import Foundation

/// Makes an App Store order's `appAccountToken` say whose it is without the order's row (#50): a database restored
/// from a backup older than the order has lost the row, and Apple's transaction carries only the token. The token
/// (a UUID, version 8) holds a keyed tag of the user — the first 48 bits of HMAC-SHA256(key, user id) — so the
/// restored server can tell whether a user who submits the transaction is the one it was bought for; it is never a
/// guessable value (the key is the operator's, `recovery.key`), and it names no user to anyone without the key.
///
/// Layout: bytes 0–5 the milliseconds since 1970 (the ledger's index of order UUIDs grows at its end, as version 7's
/// does); byte 6 `0x8A` and byte 7 `0x05` (version 8 and a 12-bit mark: OrderSafe's tagged token); byte 8 the
/// variant and 6 random bits, byte 9 random; bytes 10–15 the tag. Fourteen random bits keep one user's tokens of the
/// same millisecond apart (a collision is a taken UUID, which the ledger's insert retries).
public struct AccountTokenTag: Sendable {
    /// HMAC-SHA256 keyed once: the key's padded blocks hashed at the start, so that each tag copies the two digests'
    /// states (which copy on write) instead of padding and hashing the key again (the tag of each new order was 0.6%
    /// of a fresh submission's samples, most of it the key's).
    private let keyed: HMAC<SHA256>

    /// The shortest key taken: 32 bytes.
    public static let minimumKeyBytes = 32

    /// Nil when `key` is shorter than ``minimumKeyBytes``.
    public init?(key: [UInt8]) {
        guard key.count >= Self.minimumKeyBytes else { return nil }
        keyed = HMAC(key: SymmetricKey(data: key))
    }

    /// The 48-bit tag of `userID`.
    func tag(of userID: String) -> [UInt8] {
        var authenticator = keyed
        authenticator.update(data: Array(userID.utf8))
        return Array(authenticator.finalize().prefix(6))
    }

    /// The token of a new order of `userID` made `millisecondsSince1970`, with `random` bits.
    func token(for userID: String, millisecondsSince1970 now: UInt64, random: UInt64) -> UUID {
        let tag = tag(of: userID)
        func byte(_ value: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (8 * index)) }
        return UUID(
            uuid: (
                byte(now, 5), byte(now, 4), byte(now, 3), byte(now, 2), byte(now, 1), byte(now, 0), 0x8A, 0x05,
                0x80 | (byte(random, 0) & 0x3F), byte(random, 1), tag[0], tag[1], tag[2], tag[3], tag[4], tag[5]
            ))
    }

    /// Whether `token` is one of these tagged tokens (version 8 with OrderSafe's mark), whatever its key.
    public static func isTagged(_ token: UUID) -> Bool {
        token.uuid.6 == 0x8A && token.uuid.7 == 0x05 && token.uuid.8 & 0xC0 == 0x80
    }

    /// Whether `token` is a tagged token made for `userID` under this key.
    public func names(_ userID: String, in token: UUID) -> Bool {
        let bytes = token.uuid
        return Self.isTagged(token)
            && [bytes.10, bytes.11, bytes.12, bytes.13, bytes.14, bytes.15] == tag(of: userID)
    }
}
