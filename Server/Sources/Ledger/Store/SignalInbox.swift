import Foundation
import OrderSafeModel

/// Everything that came from outside (notifications, app submissions), kept before it is acted on ("store first,
/// then apply"), with how processing each ended.
public protocol SignalInbox: Sendable {
    /// Stores a raw inbound signal before anything else happens to it.
    func storeInbound(_ signal: InboundSignal) async throws -> InboxEntry

    /// Inside a write that applies the signal in full: stores it as already applied at `date` (it commits with what
    /// the write records, or not at all), one statement instead of an insert and an update. An entry stored before
    /// is returned as it is, for the caller to finish.
    func storeInbound(_ keyed: KeyedSignal, appliedAt date: Date) async throws -> InboxEntry

    /// As ``storeInbound(_:appliedAt:)``, and looks `query` up with it (on PostgreSQL in the same statement, one
    /// round trip fewer), for a write whose next step is that lookup. The lookup does not see the entry.
    func storeInbound(_ keyed: KeyedSignal, appliedAt date: Date, lookingUp query: PaymentQuery) async throws
        -> (entry: InboxEntry, lookup: PaymentLookup)

    /// Stored notifications (not app submissions) of `channels` not processed yet, received before `before`, tried fewer than `maxAttempts`
    /// times: for the retry sweep.
    func pendingSignals(channels: Set<Channel>, before: Date, maxAttempts: Int, limit: Int) async throws
        -> [PendingSignal]

    /// Marks a waiting inbox entry as waiting for `chain` to gain an owner.
    func awaitChain(inboxID: Int64, chain: String, signedAt: Int64?) async throws

    /// The inbox entries waiting for `chain`, in the provider's order.
    func signalsAwaiting(chain: String) async throws -> [PendingSignal]

    /// Records how processing an inbound signal ended (see ``InboxVerdict``).
    func finishInbound(id: Int64, verdict: InboxVerdict, note: String?, at: Date) async throws

    /// Deletes refused (unauthenticated) entries received before `before`, and the oldest beyond `keeping`.
    @discardableResult
    func purgeRefusedInbound(before: Date, keeping: Int) async throws -> Int

    /// App Store submissions held for their verification (``InboxVerdict/held``) with ids above `id`, oldest first:
    /// a page of them.
    func heldSubmissions(after id: Int64, limit: Int) async throws -> [PendingSignal]

    /// How many submissions with these headers (one user's) are held.
    func heldSubmissionCount(headers: [String: String]) async throws -> Int

    /// Deletes held submissions beyond the newest `keeping` that a replay has already tried (their devices keep the
    /// transactions unfinished and submit them again).
    @discardableResult
    func purgeHeldSubmissions(keeping: Int) async throws -> Int
}

extension SignalInbox {
    /// ``storeInbound(_:appliedAt:)`` of a signal not keyed yet.
    public func storeInbound(_ signal: InboundSignal, appliedAt date: Date) async throws -> InboxEntry {
        try await storeInbound(KeyedSignal(signal), appliedAt: date)
    }

    /// ``storeInbound(_:appliedAt:lookingUp:)`` of a signal not keyed yet.
    public func storeInbound(_ signal: InboundSignal, appliedAt date: Date, lookingUp query: PaymentQuery) async throws
        -> (entry: InboxEntry, lookup: PaymentLookup)
    {
        try await storeInbound(KeyedSignal(signal), appliedAt: date, lookingUp: query)
    }
}
