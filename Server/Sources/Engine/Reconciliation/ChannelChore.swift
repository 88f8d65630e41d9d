import Foundation
import Ledger

/// Work one channel needs done on a schedule, run by the job runner as one recurring job of its own kind (the App
/// Store's notification history pull): the reconciler runs it without knowing whose it is.
public protocol ChannelChore: Sendable {
    /// The job's kind: one job of this kind, keyed ``key``, is kept scheduled.
    var kind: JobKind { get }
    var key: String { get }
    /// Does the work once. `payload` is what the previous run handed on (empty the first time); returns when to run
    /// next and what to hand that run.
    func run(payload: String, now: Date) async throws -> (next: Date, payload: String)
}

/// A chore's run that failed and says when to try again and what to keep (instead of the runner's backoff by
/// attempts): its `reason` is the job's note.
public struct ChoreRetry: Error, CustomStringConvertible {
    public var next: Date
    public var payload: String
    public var reason: any Error

    public var description: String { "\(reason)" }
}
