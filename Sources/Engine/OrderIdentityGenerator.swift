import Foundation
import Ledger
import OrderSafeModel

/// Makes order numbers like `OS20261122-K7QZ3M9X2A` (Beijing date, then 50 random bits in Crockford base32)
/// and random version-4 UUIDs for StoreKit's `appAccountToken`.
///
/// The number fits Alipay's `out_trade_no` (≤ 64) and WeChat Pay's (6–32, `[A-Za-z0-9_-]`).
public struct OrderIdentityGenerator: Sendable {
    private let random: @Sendable () -> UInt64
    private let clock: any WallClock

    /// - Parameter random: a source of uniformly random 64-bit values (tests pass a seeded one).
    public init(clock: any WallClock, random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }) {
        self.clock = clock
        self.random = random
    }

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    private static let beijing: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 8 * 3600)!
        return calendar
    }()

    public func next() -> OrderIdentity {
        let day = Self.beijing.dateComponents([.year, .month, .day], from: clock.now())
        let date = String(format: "%04d%02d%02d", day.year ?? 0, day.month ?? 0, day.day ?? 0)
        var bits = random()
        var suffix = ""
        for _ in 0..<10 {
            suffix.append(Self.alphabet[Int(bits & 31)])
            bits >>= 5
        }
        var uuidBytes = [UInt8](repeating: 0, count: 16)
        for half in 0..<2 {
            let value = random()
            for index in 0..<8 { uuidBytes[half * 8 + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        uuidBytes[6] = (uuidBytes[6] & 0x0F) | 0x40  // version 4
        uuidBytes[8] = (uuidBytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        let uuid = UUID(uuid: (
            uuidBytes[0], uuidBytes[1], uuidBytes[2], uuidBytes[3], uuidBytes[4], uuidBytes[5], uuidBytes[6], uuidBytes[7],
            uuidBytes[8], uuidBytes[9], uuidBytes[10], uuidBytes[11], uuidBytes[12], uuidBytes[13], uuidBytes[14], uuidBytes[15]))
        return OrderIdentity(orderNo: "OS\(date)-\(suffix)", orderUUID: uuid)
    }
}
