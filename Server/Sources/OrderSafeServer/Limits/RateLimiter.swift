import Foundation
import OrderSafeModel
import Synchronization

/// Token buckets by key (a user, an address): `perMinute` requests a minute on average, bursts up to `burst`.
/// Memory is bounded: past `maxKeys` buckets, the full ones (idle callers) are forgotten first.
final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Date
    }

    let perMinute: Int
    let burst: Int
    let maxKeys: Int
    private let clock: any WallClock
    private let buckets = Mutex<[String: Bucket]>([:])

    init(perMinute: Int, burst: Int? = nil, maxKeys: Int = 100_000, clock: any WallClock) {
        self.perMinute = perMinute
        self.burst = burst ?? max(10, perMinute / 10)
        self.maxKeys = maxKeys
        self.clock = clock
    }

    /// Takes one token for `key`: nil when allowed, otherwise the seconds until the next token.
    func take(_ key: String) -> Int? {
        let now = clock.now()
        let rate = Double(perMinute) / 60
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: Double(burst), updated: now)
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, now.timeIntervalSince(bucket.updated)) * rate)
            bucket.updated = now
            defer {
                buckets[key] = bucket
                if buckets.count > maxKeys {
                    Self.forgetIdle(&buckets, burst: Double(burst), rate: rate, now: now, keep: maxKeys)
                }
            }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }

    /// Whether `key` has no token left now (nothing is taken).
    func isSpent(_ key: String) -> Bool {
        let now = clock.now()
        let rate = Double(perMinute) / 60
        return buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return false }
            return min(Double(burst), bucket.tokens + max(0, now.timeIntervalSince(bucket.updated)) * rate) < 1
        }
    }

    /// Drops the buckets that have refilled (their callers idle), then, if still over, the least recently used.
    private static func forgetIdle(_ buckets: inout [String: Bucket], burst: Double, rate: Double, now: Date, keep: Int)
    {
        buckets = buckets.filter { $0.value.tokens + now.timeIntervalSince($0.value.updated) * rate < burst }
        guard buckets.count > keep else { return }
        for (key, _) in buckets.sorted(by: { $0.value.updated < $1.value.updated }).prefix(buckets.count - keep) {
            buckets[key] = nil
        }
    }
}
