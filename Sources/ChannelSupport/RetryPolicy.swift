/// How often and how patiently a provider client retries a call that failed for a reason worth retrying
/// (network, 5xx, the provider's system errors); business refusals are never retried.
public struct RetryPolicy: Sendable {
    public var attempts: Int
    public var firstDelay: Duration
    public var timeout: Duration

    public init(attempts: Int = 3, firstDelay: Duration = .milliseconds(200), timeout: Duration = .seconds(10)) {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.timeout = timeout
    }

    /// The delay before attempt `attempt` (2, 3, …): `firstDelay`, then four times longer each time.
    public func delay(before attempt: Int) -> Duration {
        var delay = firstDelay
        for _ in 0..<max(0, attempt - 2) { delay *= 4 }
        return delay
    }
}
