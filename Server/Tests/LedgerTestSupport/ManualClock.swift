import Foundation
import OrderSafeModel
import Synchronization

/// A clock the test moves forward.
public final class ManualClock: WallClock {
    private let date: Mutex<Date>

    public init(_ date: Date) {
        self.date = Mutex(date)
    }

    public func now() -> Date { date.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        date.withLock { $0 += seconds }
    }
}
