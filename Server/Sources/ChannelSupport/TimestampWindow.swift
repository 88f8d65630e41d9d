/// Whether a timestamp someone sent lies within a window around now, without trapping on any `Int64` they can
/// send (`abs(now - timestamp)` traps for `Int64.min` and overflows for values far from now).
public enum TimestampWindow {
    /// True when `timestamp` is at most `seconds` away from `now`, in either direction.
    public static func contains(_ timestamp: Int64, now: Int64, seconds: Int64) -> Bool {
        let (difference, overflow) = now.subtractingReportingOverflow(timestamp)
        return !overflow && difference.magnitude <= seconds.magnitude
    }
}
