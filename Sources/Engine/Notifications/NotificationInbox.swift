import Foundation
import Ledger
import OrderSafeModel

/// Why a stored notification was refused: the HTTP status the provider gets and the reason kept in the inbox.
/// `unauthenticated` refusals (no valid signature, not even the provider's format) are anyone's bytes: their entry
/// is closed, truncated and purged later. Others came from the provider and stay for the retry sweep.
struct Refusal: Error {
    var status: Int
    var message: String
    var unauthenticated = false
}

/// The first step of every provider notification: the raw request is stored, then applied, and the outcome is
/// recorded on the stored entry; an exact copy of one already applied is acknowledged at once. Nothing is
/// acknowledged before it is stored; a refusal is recorded and answered, while any other failure (a database
/// fault) propagates so the provider sends the notification again.
struct NotificationInbox {
    let context: EngineContext

    /// Stores and applies one notification. `apply` gets the inbox id and may return a note to keep on an entry it
    /// accepted without applying (it stays for the retry sweep). Returns nil when accepted, else the refusal.
    func process(
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
            let verdict: InboxVerdict = refusal.unauthenticated ? .refused : refusal.status >= 500 ? .failed : .waiting
            try await context.ledger.finishInbound(
                id: entry.id, verdict: verdict, note: refusal.message, at: context.clock.now())
            return refusal
        }
    }
}
