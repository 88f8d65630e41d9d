import Foundation
import OrderSafeModel
import Synchronization

/// At most one use per key in each `interval`: what keeps an app that repeats its client-result hint from making
/// the server ask the provider each time. Memory is bounded: expired keys are dropped once there are many.
public final class Cooldown: Sendable {
    let interval: TimeInterval
    private let clock: any WallClock
    private let lastUse = Mutex<[String: Date]>([:])

    public init(interval: TimeInterval, clock: any WallClock) {
        self.interval = interval
        self.clock = clock
    }

    /// True, and the key's cooldown starts, when its last use is at least `interval` ago.
    public func claim(_ key: String) -> Bool {
        let now = clock.now()
        return lastUse.withLock { lastUse in
            if let last = lastUse[key], now.timeIntervalSince(last) < interval { return false }
            lastUse[key] = now
            if lastUse.count > 10_000 { lastUse = lastUse.filter { now.timeIntervalSince($0.value) < interval } }
            return true
        }
    }
}
