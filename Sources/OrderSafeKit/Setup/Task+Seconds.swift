import Foundation

extension Task where Success == Never, Failure == Never {
    /// Sleeps `seconds` (none when it is negative or NaN; an infinite wait is capped at `UInt64.max` nanoseconds).
    /// `Task.sleep(for:)` takes a `Duration`, which needs iOS 16; OrderSafeKit runs from iOS 15.
    static func sleep(seconds: TimeInterval) async throws {
        try await sleep(nanoseconds: nanoseconds(seconds))
    }

    static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds > 0 else { return 0 }  // NaN compares false
        let nanoseconds = seconds * 1e9
        // Double(UInt64.max) rounds up to 2^64: anything below it converts without trapping.
        return nanoseconds < Double(UInt64.max) ? UInt64(nanoseconds) : UInt64.max
    }
}
