import ChannelSupport
import Synchronization
import Testing

@Suite("RetryPolicy.run: the one retry loop every provider client uses")
struct RetryPolicyTests {
    struct Failure: Error, Equatable {
        var attempt: Int
    }

    /// Runs `outcomes` in order through a three-attempt policy, recording the waits.
    static func run(_ outcomes: [(Int) -> Attempt<String, Failure>]) async -> (
        Result<String, Failure>, calls: Int, sleeps: [Duration]
    ) {
        let sleeps = Mutex<[Duration]>([])
        let calls = Mutex(0)
        let policy = RetryPolicy(attempts: 3, firstDelay: .milliseconds(200))
        do {
            let value = try await policy.run(sleep: { duration in sleeps.withLock { $0.append(duration) } }) {
                let call = calls.withLock {
                    $0 += 1
                    return $0
                }
                return outcomes[call - 1](call)
            }
            return (.success(value), calls.withLock { $0 }, sleeps.withLock { $0 })
        } catch {
            return (.failure(error), calls.withLock { $0 }, sleeps.withLock { $0 })
        }
    }

    @Test("a stop ends the loop at once: a refusal is never retried")
    func stopIsFinal() async {
        let (result, calls, sleeps) = await Self.run([{ .stop(Failure(attempt: $0)) }, { _ in .success("late") }])
        #expect(result == .failure(Failure(attempt: 1)) && calls == 1 && sleeps.isEmpty)
    }

    @Test("retries back off 200 ms then 800 ms and end with the last failure")
    func backoff() async {
        let (result, calls, sleeps) = await Self.run(Array(repeating: { .retry(Failure(attempt: $0)) }, count: 3))
        #expect(result == .failure(Failure(attempt: 3)) && calls == 3)
        #expect(sleeps == [.milliseconds(200), .milliseconds(800)])
    }

    @Test("a retry that succeeds returns its value; a provider's Retry-After lengthens the wait, never shortens it")
    func retryAfter() async {
        let (result, calls, sleeps) = await Self.run([
            { .retry(Failure(attempt: $0), after: .seconds(5)) }, { _ in .success("ok") },
        ])
        #expect(result == .success("ok") && calls == 2 && sleeps == [.seconds(5)])
        let short = await Self.run([{ .retry(Failure(attempt: $0), after: .milliseconds(1)) }, { _ in .success("ok") }])
        #expect(short.sleeps == [.milliseconds(200)])
    }

    @Test("failure(_:retryable:) picks retry or stop")
    func failureHelper() async {
        let (result, calls, _) = await Self.run([
            { .failure(Failure(attempt: $0), retryable: true) }, { .failure(Failure(attempt: $0), retryable: false) },
        ])
        #expect(result == .failure(Failure(attempt: 2)) && calls == 2)
    }
}
