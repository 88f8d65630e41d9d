import Ledger

/// What one App Store recording carries from step to step, passed where it is used: the write it is part of, the
/// payment lookup made with its inbox entry, and the subscription chain whose waiting signals it is applying.
struct RecordingScope: Sendable {
    /// The write every step goes through: a submission's transaction (``LedgerTransactions/atomically(_:)``), or
    /// the ledger itself, each call a write of its own. What must wait for the commit goes to its
    /// ``LedgerWrite/afterCommit(_:)``.
    var write: any LedgerWrite
    /// The lookup made with the submission's inbox entry, for the first step that would have made it.
    var prefetched: PrefetchedLookup?
    /// The chain whose waiting signals are being applied (so that applying them does not start over).
    var applyingChain: String?
}
