import ChannelSupport
import Crypto
import Ledger
import OrderSafeModel

/// The inbox entries of app submissions this process has applied, so that a resend (an app retrying, a restore) is
/// answered by readers without asking the database whether it is one, and a fresh submission goes to the writer
/// without a read first. A resend it does not know — applied by another replica or before a restart, or forgotten —
/// goes to the writer too, whose insert finds the entry stored before and answers from what is recorded.
///
/// Keyed as the inbox keys a submission (its kind, its user and the request's bytes), by the one digest the inbox's
/// insert uses too (``KeyedSignal``). Bounded: two generations of at most `generation` digests each; when the newer
/// one is full, the older is dropped.
final class AppliedSubmissions: Sendable {
    /// A submission's key: its kind, and the digest the inbox keys it by (of its user and the request's bytes).
    struct Key: Hashable, Sendable {
        let kind: InboxKind
        let digest: SHA256Digest

        init(_ keyed: KeyedSignal) {
            kind = keyed.signal.kind
            digest = keyed.digest
        }
    }

    /// The most digests a generation holds (two are kept): 32,768 by default, about 4 MB in all.
    var generation: Int { entries.generation }
    private let entries: RecentValues<Key, Int64>

    init(generation: Int = 1 << 15) {
        entries = RecentValues(generation: generation)
    }

    /// The id of the inbox entry `key` was applied as, if this process remembers it.
    func entryID(for key: Key) -> Int64? {
        entries.value(for: key)
    }

    /// Remembers that `key` is applied, as inbox entry `entryID`; call only once the entry's verdict has committed.
    func remember(_ key: Key, entryID: Int64) {
        entries.remember(key, entryID)
    }
}
