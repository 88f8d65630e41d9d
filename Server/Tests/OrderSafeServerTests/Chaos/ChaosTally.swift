import LedgerTestSupport
import Synchronization

/// What a chaos run did, counted as it goes.
final class ChaosTally: Sendable {
    struct Counts: Sendable, CustomStringConvertible {
        var purchases: [String: Int] = [:]
        /// Requests, notifications and app actions.
        var steps = 0
        /// Steps a fault was injected into.
        var faulted = 0
        /// Signals that reached the server again after it had already taken them (retries, duplicates, replays).
        var redeliveries = 0
        var abandoned = 0
        var crashedBeforeSubmitting = 0
        var foreignSubmissions = 0
        /// Submissions by another user that came before (or together with) the owner's own.
        var foreignFirst = 0
        /// Apple refunds that reached the server before the purchase's notification, or before the app's submission.
        var refundsBeforeNotification = 0
        var refundsBeforeSubmission = 0
        /// Subscribers whose app submitted a renewal only, never the original purchase.
        var renewalOnlySubscribers = 0

        var description: String {
            let total = purchases.values.reduce(0, +)
            let byChannel = purchases.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let share = steps == 0 ? 0 : Double(faulted) * 100 / Double(steps)
            return
                "\(total) purchases (\(byChannel)); \(faulted) of \(steps) steps faulted (\(String(format: "%.1f", share))%); "
                + "\(redeliveries) redeliveries absorbed; \(abandoned) abandoned unpaid; \(crashedBeforeSubmitting) app crashes before "
                + "submitting; \(foreignSubmissions) submissions by another user recorded for the owner (\(foreignFirst) of them before the owner's); "
                + "refunds first: \(refundsBeforeNotification) before the purchase's notification, \(refundsBeforeSubmission) before the "
                + "app's submission; \(renewalOnlySubscribers) subscribers whose app submitted a renewal only"
        }
    }

    private let counts = Mutex(Counts())

    func update(_ change: (inout Counts) -> Void) {
        counts.withLock { change(&$0) }
    }

    func step(faulted: Bool = false, redelivery: Bool = false) {
        counts.withLock {
            $0.steps += 1
            if faulted { $0.faulted += 1 }
            if redelivery { $0.redeliveries += 1 }
        }
    }

    var snapshot: Counts { counts.withLock { $0 } }
}
