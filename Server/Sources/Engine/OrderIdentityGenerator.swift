import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

/// Makes order numbers like `OS20261122-1R8GQ2K7QZ` (the Beijing date; then, in Crockford base32, the day's
/// millisecond in six letters and 20 random bits in four) and time-ordered UUIDs (version 7: milliseconds since 1970,
/// then 74 random bits) for StoreKit's `appAccountToken`.
///
/// With an ``AccountTokenTag`` the UUID is its tagged version 8 token instead: it says whose order it was when the
/// row is lost (#50).
///
/// The number fits Alipay's `out_trade_no` (≤ 64) and WeChat Pay's (6–32, `[A-Za-z0-9_-]`). The UUID leads with
/// the time so the ledger's index of order UUIDs grows at its end: a random (version 4) one landed each new order
/// on a page of its own, one more page for every commit to write. The number leads with the time for the same
/// reason: with 50 random bits its index took 1.25 of the 12.5 pages a fresh submission put through the log, 0.27 now
/// (`scripts/bench/wal-pages`). Two orders of one millisecond share a number one time in a million, and the ledger
/// then makes another (`SQLLedger.createOrder`). Whose an order is never rests on its number being secret: every
/// route that takes one is its owner's.
public struct OrderIdentityGenerator: Sendable {
    private let random: @Sendable () -> UInt64
    private let clock: any WallClock
    /// Tags App Store tokens with their user; nil: version 7 tokens, which name nobody.
    public let accountTags: AccountTokenTag?

    /// - Parameter random: a source of uniformly random 64-bit values (tests pass a seeded one).
    public init(
        clock: any WallClock, random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) },
        accountTags: AccountTokenTag? = nil
    ) {
        self.clock = clock
        self.random = random
        self.accountTags = accountTags
    }

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    private static let millisecondsPerDay: Int64 = 86_400_000
    private static let beijingOffset: Int64 = 8 * 3_600_000

    /// A new identity; `userID`'s order's token is tagged with it when ``accountTags`` are set.
    public func next(for userID: String? = nil) -> OrderIdentity {
        let now = max(0, min(clock.now().millisecondsSince1970, (1 << 48) - 1))
        var number = Array("OS".utf8)
        number.reserveCapacity(21)
        Self.appendDate(daysSince1970: (now + Self.beijingOffset) / Self.millisecondsPerDay, to: &number)
        number.append(UInt8(ascii: "-"))
        let millisecond = (now + Self.beijingOffset) % Self.millisecondsPerDay  // < 2^27: six letters
        for shift in stride(from: 25, through: 0, by: -5) {
            number.append(Self.alphabet[Int((millisecond >> Int64(shift)) & 31)])
        }
        var bits = random()
        for _ in 0..<4 {
            number.append(Self.alphabet[Int(bits & 31)])
            bits >>= 5
        }
        if let accountTags, let userID {
            return OrderIdentity(
                orderNo: String(decoding: number, as: UTF8.self),
                orderUUID: accountTags.token(for: userID, millisecondsSince1970: UInt64(now), random: random()))
        }
        let (high, low) = (random(), random())
        func byte(_ value: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (8 * index)) }
        let uuid = UUID(
            uuid: (
                byte(UInt64(now), 5), byte(UInt64(now), 4), byte(UInt64(now), 3), byte(UInt64(now), 2),
                byte(UInt64(now), 1),
                byte(UInt64(now), 0), 0x70 | (byte(high, 0) & 0x0F), byte(high, 1),  // version 7
                // RFC 9562 variant
                0x80 | (byte(low, 0) & 0x3F), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5),
                byte(low, 6), byte(low, 7)
            ))
        return OrderIdentity(orderNo: String(decoding: number, as: UTF8.self), orderUUID: uuid)
    }

    /// Whether `text` has the shape ``next(for:)`` gives an order number (`OS`, eight digits, `-`, ten base32
    /// letters): what a number must be before a provider is asked about it.
    public static func isOrderNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(22))
        guard bytes.count == 21, bytes[0] == UInt8(ascii: "O"), bytes[1] == UInt8(ascii: "S"),
            bytes[10] == UInt8(ascii: "-")
        else { return false }
        return bytes[2..<10].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            && bytes[11...].allSatisfy(alphabet.contains)
    }

    /// Appends the date `daysSince1970` days after 1970-01-01 as `YYYYMMDD` (`Calendar` and `String(format:)` were
    /// a third of making an identity, on the ledger's writer).
    private static func appendDate(daysSince1970 days: Int64, to bytes: inout [UInt8]) {
        let (year, month, day) = civilDate(daysSince1970: days)
        for (value, width) in [(year, 4), (month, 2), (day, 2)] {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (value / divisor) % 10))
                divisor /= 10
            }
        }
    }
}
