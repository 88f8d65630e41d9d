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

/// "Store first, then apply", in one place: everything that comes from outside — a provider's notification, an
/// app's submission or restore — is kept in the ledger's inbox before anything is done with it, and how processing
/// it ended is written on its entry. Nothing is acknowledged before it is stored.
struct Inbox {
    let context: EngineContext<any InboxLedger>

    /// A provider's notification: stored, then applied, unless an exact copy was applied before (the provider resent
    /// it: acknowledged at once). `apply` gets the inbox id and may return a note to keep on an entry it accepted
    /// without applying (it stays for the retry sweep). Returns nil when accepted, else the refusal, which is recorded
    /// and answered; any other failure (a database fault) propagates so the provider sends it again.
    func notification(
        _ channel: Channel, headers: [String: String], body: [UInt8], apply: (Int64) async throws -> String?
    ) async throws -> Refusal? {
        let entry = try await context.ledger.storeInbound(
            InboundSignal(
                channel: channel, kind: .notify, headers: headers, body: body, receivedAt: context.clock.now()))
        // An exact copy (body and signature headers) of a notification already applied: the provider resent it.
        if entry.processed { return nil }
        do {
            let note = try await apply(entry.id)
            try await context.ledger.finishInbound(
                id: entry.id, verdict: note == nil ? .applied : .waiting, note: note, at: context.clock.now())
            return nil
        } catch let refusal as Refusal {
            context.logger.warning(
                "\(channel.rawValue) notification refused",
                metadata: ["inbox_id": "\(entry.id)", "reason": "\(refusal.message)"])
            let verdict: InboxVerdict =
                refusal.unauthenticated ? .refused : refusal.held ? .held : refusal.status >= 500 ? .failed : .waiting
            try await context.ledger.finishInbound(
                id: entry.id, verdict: verdict, note: refusal.message, at: context.clock.now())
            return refusal
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

    /// As ``request(_:_:)``, but the entry, what `work` records and the entry's verdict are one transaction (durable
    /// together, nothing half-written if the process dies): the entry is stored as applied, and an entry stored
    /// before is returned as it is (applied already, or failed and tried again now). `work` runs on the ledger's
    /// writer and gets the evidence, the lookup of `query` made with the entry's insert, and the ledger of the
    /// transaction (every step of `work` goes through it). When the transaction
    /// fails, nothing of it was written: the entry is kept apart with why (`failed`) for operators, and the error is
    /// thrown. Returns `work`'s result and the entry's id.
    func atomically<Result: Sendable>(
        _ signal: InboundSignal, lookingUp query: PaymentQuery?,
        _ work: @escaping @Sendable (String, PrefetchedLookup?, any LedgerWrite) async throws -> Result
    ) async throws -> (result: Result, entryID: Int64) {
        do {
            return try await context.ledger.atomically { [context] ledger in
                let entry: InboxEntry
                var prefetched: PrefetchedLookup?
                if let query {
                    let stored = try await ledger.storeInbound(signal, appliedAt: context.clock.now(), lookingUp: query)
                    (entry, prefetched) = (stored.entry, PrefetchedLookup(query: query, lookup: stored.lookup))
                } else {
                    entry = try await ledger.storeInbound(signal, appliedAt: context.clock.now())
                }
                let result = try await work("inbox:\(entry.id)", prefetched, ledger)
                if !entry.processed {
                    try await ledger.finishInbound(id: entry.id, verdict: .applied, note: nil, at: context.clock.now())
                }
                return (result, entry.id)
            }
        } catch {
            if let entry = try? await context.ledger.storeInbound(signal), !entry.processed {
                try? await context.ledger.finishInbound(
                    id: entry.id, verdict: .failed, note: "\(error)", at: context.clock.now())
            }
            throw error
        }
    }
}

/// The ledger's roles the inbox uses: the inbox itself, and opening writes that keep an entry with what it caused.
public typealias InboxLedger = LedgerTransactions & SignalInbox
