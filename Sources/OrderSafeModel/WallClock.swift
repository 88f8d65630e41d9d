import Foundation

/// The current wall-clock time, injected so tests can pin it.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
