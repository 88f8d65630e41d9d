import Ledger

/// Work a channel hands to the job queue an item at a time (one job per key: a chain whose history to pull), so that no
/// answer waits for it: the job runner runs it once, and a failure is tried again on the runner's backoff.
public protocol ChannelTask: Sendable {
    /// The kind of the jobs this task runs.
    var kind: JobKind { get }
    /// Does the work of one job; `key` and `payload` are what was queued.
    func run(key: String, payload: String) async throws
}
