import Foundation

/// Carries a vendor SDK's result from where the app receives it (a callback, `application(_:open:options:)`,
/// `scene(_:openURLContexts:)`, SwiftUI `onOpenURL`, a universal link) to the bridge call waiting for it.
///
/// A buyer often comes back from the payment app without any of those: by the app switcher, the status bar's back
/// link, or because the payment app crashed. Tell the relay when the app is active again (``appBecameActive(grace:)``):
/// if no result arrives within the grace period, the wait ends with `noAnswer` and OrderSafe asks the server (which
/// asks the provider). A result that arrives with nobody waiting (late, a second one, or the app was relaunched by
/// the payment app) is dropped and changes nothing: OrderSafe asked the server already, or resumes from its journal.
public actor PaymentResultRelay<Result: Sendable> {
    private var waiting: CheckedContinuation<Result, Never>?
    /// Which wait is current: an expiry scheduled for an earlier one does nothing.
    private var generation = 0
    private let noAnswer: Result

    /// `noAnswer`: what a wait ends with when the buyer came back without the payment app's answer.
    public init(noAnswer: Result) {
        self.noAnswer = noAnswer
    }

    /// Registers as the waiter, then calls `start` (which opens the payment app), and returns the next
    /// ``deliver(_:)``, or `noAnswer` (see ``appBecameActive(grace:)``). A second wait replaces the first, which
    /// returns `superseded`.
    public func wait(superseded: Result, start: @escaping @Sendable () -> Void) async -> Result {
        waiting?.resume(returning: superseded)
        waiting = nil
        generation += 1
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

    /// The app is active again (`sceneDidBecomeActive`, SwiftUI's `scenePhase == .active`,
    /// `applicationDidBecomeActive`): a result that has not arrived within `grace` seconds is not coming (the payment app
    /// answers through the URL or universal link that made the app active, in a moment), and the wait ends with
    /// `noAnswer`. Nothing happens when nobody waits.
    public func appBecameActive(grace: TimeInterval = 2) {
        guard waiting != nil else { return }
        let current = generation
        Task { [weak self] in
            try? await Task.sleep(seconds: grace)
            await self?.expire(current)
        }
    }

    private func expire(_ wait: Int) {
        guard wait == generation, let waiting else { return }
        self.waiting = nil
        waiting.resume(returning: noAnswer)
    }
}
