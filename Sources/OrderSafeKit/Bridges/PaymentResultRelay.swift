import Foundation

/// Carries a vendor SDK's result from where the app receives it (a callback, `application(_:open:options:)`, a
/// universal link) to the bridge call waiting for it. A result that arrives with nobody waiting (the app was
/// relaunched by the payment app) is dropped: OrderSafe resumes that order from its journal and asks the server.
public actor PaymentResultRelay<Result: Sendable> {
    private var waiting: CheckedContinuation<Result, Never>?

    public init() {}

    /// Registers as the waiter, then calls `start` (which opens the payment app), and returns the next
    /// ``deliver(_:)``. A second wait replaces the first, which returns `superseded`.
    public func wait(superseded: Result, start: @escaping @Sendable () -> Void) async -> Result {
        waiting?.resume(returning: superseded)
        waiting = nil
        return await withCheckedContinuation { continuation in
            waiting = continuation
            start()
        }
    }

    /// Hands a result to the waiting bridge call. Returns false when nobody waits.
    @discardableResult
    public func deliver(_ result: Result) -> Bool {
        guard let waiting else { return false }
        self.waiting = nil
        waiting.resume(returning: result)
        return true
    }
}
