import Foundation
import Ledger
import OrderSafeModel

/// Why a stored notification was refused: the HTTP status the provider gets and the reason kept in the inbox.
/// `unauthenticated` refusals (no valid signature, not even the provider's format) are anyone's bytes: their entry
/// is closed, truncated and purged later. `held` ones are the provider's, refused only by this server's settings:
/// kept whole for the operator's replay once the settings are fixed. Others stay for the retry sweep.
struct Refusal: Error {
    var status: Int
    var message: String
    var unauthenticated = false
    var held = false
}

/// "Store first, then apply", in one place and with one meaning for every channel and every kind of signal: what
/// comes from outside — a provider's notification, an app's submission or restore — is verified first, outside any
/// write (signatures, a provider's keys or API); then its inbox entry, what it causes and the entry's verdict are one
/// transaction, and nothing is acknowledged before that transaction has committed. What is refused, or fails, is
/// kept apart on its entry with why (in a write of its own, after the failed one rolled back): refused bytes cut
/// short and closed, the rest for the retry sweep or the operator. One write per signal, never a stored entry
/// beside half of what it caused.
struct Inbox {
    let context: EngineContext<any InboxLedger>

    /// Held signals (what this server's settings could not verify) kept at most; the sweep drops older ones, which
    /// the devices keep unfinished and submit again.
    static let heldKept = 10_000

    /// A provider's notification: `verify` runs first (a ``Refusal`` it throws is kept on the entry and answered);
    /// then the entry, what `apply` records through the write it is handed and the entry's verdict commit together,
    /// unless an exact copy was applied before (the provider resent it: acknowledged at once). `apply` gets the
    /// verified notification and the inbox id, and may return a note to keep on an entry it accepted without applying
    /// (it stays for the retry sweep); a ``Refusal`` it throws rolls back what it wrote and is kept on the entry.
    /// Returns nil when accepted, else the refusal, which is answered; any other failure is kept as `failed` and
    /// propagates, so the provider sends it again.
    func notification<Verified: Sendable>(
        _ channel: Channel, headers: [String: String], body: [UInt8], verify: () async throws -> Verified,
        apply: @escaping @Sendable (Verified, Int64, any LedgerWrite) async throws -> String?
    ) async throws -> Refusal? {
        let signal = InboundSignal(
            channel: channel, kind: .notify, headers: headers, body: body, receivedAt: context.clock.now())
        do {
            let verified = try await verify()
            try await context.ledger.atomically { [context] write in
                let entry = try await write.storeInbound(signal)
                // An exact copy (body and signature headers) of a notification already applied: the provider resent it.
                guard !entry.processed else { return }
                let note = try await apply(verified, entry.id, write)
                try await write.finishInbound(
                    id: entry.id, verdict: note == nil ? .applied : .waiting, note: note, at: context.clock.now())
            }
            return nil
        } catch let refusal as Refusal {
            let verdict: InboxVerdict =
                refusal.unauthenticated ? .refused : refusal.held ? .held : refusal.status >= 500 ? .failed : .waiting
            let id = try await keep(signal, verdict: verdict, note: refusal.message)
            context.logger.warning(
                "\(channel.rawValue) notification refused",
                metadata: ["inbox_id": "\(id.map { "\($0)" } ?? "-")", "reason": "\(refusal.message)"])
            return refusal
        } catch {
            _ = try? await keep(signal, verdict: .failed, note: "\(error)")
            throw error
        }
    }

    /// Keeps `signal`'s entry apart with how its processing ended, in one write; an entry already processed (an
    /// exact copy applied meanwhile) is left as it is. Returns the entry's id.
    private func keep(_ signal: InboundSignal, verdict: InboxVerdict, note: String) async throws -> Int64? {
        try await context.ledger.atomically { [context] write in
            let entry = try await write.storeInbound(signal)
            guard !entry.processed else { return entry.id }
            try await write.finishInbound(id: entry.id, verdict: verdict, note: note, at: context.clock.now())
            return entry.id
        }
    }

    /// An app's request that did not verify: anyone's bytes, kept as refused notifications are — its first
    /// ``SQLLedger/refusedBodyBytes`` for forensics, closed at once (one transaction), purged with them — so that
    /// junk submitted as fast as the rate limit allows fills no disk.
    func refused(_ signal: InboundSignal, reason: String) async throws {
        var kept = signal
        kept.body = Array(signal.body.prefix(SQLLedger.refusedBodyBytes))
        try await context.ledger.atomically { [kept, context] ledger in
            let entry = try await ledger.storeInbound(kept)
            try await ledger.finishInbound(id: entry.id, verdict: .refused, note: reason, at: context.clock.now())
        }
    }

    /// An app's submission or restore, verified already: the entry, what `work` records and the entry's verdict are
    /// one transaction (durable together, nothing half-written if the process dies): the entry is stored as applied,
    /// and an entry stored before is returned as it is (applied already, or failed and tried again now). `work` runs on the ledger's
    /// writer and gets the evidence, the lookup of `query` made with the entry's insert, and the ledger of the
    /// transaction (every step of `work` goes through it). When the transaction
    /// fails, nothing of it was written: the entry is kept apart with why (`failed`) for operators, and the error is
    /// thrown. Returns `work`'s result and the entry's id.
    func atomically<Result: Sendable>(
        _ keyed: KeyedSignal, lookingUp query: PaymentQuery?,
        _ work: @escaping @Sendable (String, PrefetchedLookup?, any LedgerWrite) async throws -> Result
    ) async throws -> (result: Result, entryID: Int64) {
        do {
            return try await context.ledger.atomically(lockOrder: keyed.lockOrder) { [context] ledger in
                let entry: InboxEntry
                var prefetched: PrefetchedLookup?
                if let query {
                    let stored = try await ledger.storeInbound(keyed, appliedAt: context.clock.now(), lookingUp: query)
                    (entry, prefetched) = (stored.entry, PrefetchedLookup(query: query, lookup: stored.lookup))
                } else {
                    entry = try await ledger.storeInbound(keyed, appliedAt: context.clock.now())
                }
                let result = try await work("inbox:\(entry.id)", prefetched, ledger)
                if !entry.processed {
                    try await ledger.finishInbound(id: entry.id, verdict: .applied, note: nil, at: context.clock.now())
                }
                return (result, entry.id)
            }
        } catch {
            _ = try? await keep(keyed.signal, verdict: .failed, note: "\(error)")
            throw error
        }
    }
}

/// The ledger's roles the inbox uses: the inbox itself, and opening writes that keep an entry with what it caused.
public typealias InboxLedger = LedgerTransactions & SignalInbox
