import Foundation

/// A payment app's answer, or none once a time has passed: a bridge call that never returns (a payment app that
/// never calls back, and an app that never said it was active again) must not hold a purchase forever.
enum BoundedAnswer {
    /// `call`'s result, or nil after `limit` seconds. The call is left to finish on its own; what it returns later is
    /// dropped.
    static func within<R: Sendable>(_ limit: TimeInterval, _ call: @escaping @Sendable () async -> R) async -> R? {
        let first = First<R>()
        return await withCheckedContinuation { continuation in
            Task {
                await first.set(continuation)
                let timer = Task {
                    try? await Task.sleep(seconds: limit)
                    await first.offer(nil)
                }
                Task {
                    await first.offer(await call())
                    timer.cancel()
                }
            }
        }
    }

    /// Resumes its continuation with the first offer only.
    private actor First<R: Sendable> {
        private var continuation: CheckedContinuation<R?, Never>?
        private var answer: R??

        func set(_ continuation: CheckedContinuation<R?, Never>) {
            if let answer {
                continuation.resume(returning: answer)
            } else {
                self.continuation = continuation
            }
        }

        func offer(_ value: R?) {
            guard answer == nil else { return }
            answer = .some(value)
            continuation?.resume(returning: value)
            continuation = nil
        }
    }
}
