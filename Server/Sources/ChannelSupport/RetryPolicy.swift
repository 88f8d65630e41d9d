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

/// What one attempt of a provider call came to: the one decision each client makes, so that the loop around it
/// (``RetryPolicy/run(sleep:onRetry:_:)``) cannot mistake a refusal for a failure worth retrying.
public enum Attempt<Value, Failure: Error> {
    case success(Value)
    /// Worth another attempt (network, timeout, 5xx, 429, the provider's system errors); `after` is the least
    /// wait the provider asked for (`Retry-After`).
    case retry(Failure, after: Duration? = nil)
    /// Final: a refusal retrying cannot change.
    case stop(Failure)

    /// What a transport's failure (`error`, thrown before any answer) comes to: a network failure or timeout is worth
    /// another attempt; an answer larger than the transport reads (``ProviderResponseTooLarge``) is not.
    public static func transportFailure(_ error: any Error, _ make: (String) -> Failure) -> Attempt {
        let failure = make(String(describing: error))
        return error is ProviderResponseTooLarge ? .stop(failure) : .retry(failure)
    }

    /// `.retry` when `retryable`, otherwise `.stop`.
    public static func failure(_ error: Failure, retryable: Bool, after: Duration? = nil) -> Attempt {
        retryable ? .retry(error, after: after) : .stop(error)
    }
}

extension RetryPolicy {
    /// Runs `attempt` until it succeeds or stops, at most `attempts` times, waiting ``delay(before:)`` (or longer,
    /// when the provider asked) between attempts; `onRetry` hears every failure worth retrying (for logs).
    public func run<Value, Failure: Error>(
        sleep: (Duration) async throws -> Void,
        onRetry: (_ attempt: Int, _ error: Failure) -> Void = { _, _ in },
        _ attempt: () async -> Attempt<Value, Failure>
    ) async throws(Failure) -> Value {
        var number = 1
        while true {
            switch await attempt() {
            case .success(let value):
                return value
            case .stop(let error):
                throw error
            case .retry(let error, let after):
                onRetry(number, error)
                guard number < attempts else { throw error }
                number += 1
                try? await sleep(max(delay(before: number), after ?? .zero))
            }
        }
    }
}
