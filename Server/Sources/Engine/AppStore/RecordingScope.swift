import Ledger
import Synchronization

/// What one recording carries from step to step, passed where it is used: the ledger of its transaction, the work
/// that transaction must not wait for, the payment lookup made with its inbox entry, and the subscription chain whose
/// waiting signals it is applying.
struct RecordingScope: Sendable {
    /// The ledger of the transaction the recording is part of (``OrderBook/atomically(_:)``); nil: the engine's own,
    /// each call a write of its own.
    var ledger: (any LedgerStore)?
    /// Jobs queued to run once the enclosing transaction has committed; nil outside one (they run at once).
    var followUps: FollowUps?
    /// The lookup made with the submission's inbox entry, for the first step that would have made it.
    var prefetched: PrefetchedLookup?
    /// The chain whose waiting signals are being applied (so that applying them does not start over).
    var applyingChain: String?

    /// A recording outside any submission's transaction: follow-ups run at once, nothing was looked up before.
    static let direct = RecordingScope()

    /// Work the transaction must not wait for (provider calls, other signals): run once it has committed, or at
    /// once outside one.
    func afterCommit(_ job: @escaping @Sendable () async -> Void) async {
        if let followUps {
            followUps.append(job)
        } else {
            await job()
        }
    }
}

/// Work queued while a submission's transaction runs, run in order once it has committed.
final class FollowUps: Sendable {
    private let jobs = Mutex<[@Sendable () async -> Void]>([])

    func append(_ job: @escaping @Sendable () async -> Void) {
        jobs.withLock { $0.append(job) }
    }

    func run() async {
        for job in jobs.withLock({ $0 }) { await job() }
    }
}
