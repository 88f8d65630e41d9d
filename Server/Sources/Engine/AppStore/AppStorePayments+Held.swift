import AppStore
import Foundation
import Ledger
import Metrics
import OrderSafeModel

/// Submissions held because this server could not verify them with its settings (``AppStoreSubmissionError/unverifiable(_:)``):
/// said loudly, kept (bounded), and recorded for their submitters once an operator fixed the settings and replays them.
extension AppStorePayments: HeldSignalReplayer {
    /// A StoreKit 2 signed transaction is a few KiB (its certificate chain and payload); a larger body is no
    /// transaction and is not held.
    static let maxHeldTransactionBytes = 16 * 1024

    /// Held submissions one user may have at once; more wait on the device, which keeps them unfinished and submits
    /// them again (a genuine buyer has a few at most, and the first says what is wrong).
    public static let heldPerUser = 20

    /// Whether a verification failure is this server's settings' to decide: a wrong bundle or app id, environment,
    /// or set of trusted roots fails every genuine purchase alike. A chain that fails is the settings' only when it
    /// is signed up to one of Apple's roots or a configured one (`anchored`); a chain of one's own is a forgery.
    static func dependsOnSettings(_ error: VerificationError, anchored: () -> Bool) -> Bool {
        switch error {
        case .invalidAppIdentifier, .invalidEnvironment: true
        case .invalidChain: anchored()
        case .invalidJWTFormat, .invalidCertificate, .verificationFailure, .invalidChainLength,
            .retryableVerificationFailure:
            false
        }
    }

    /// Keeps a submission this server's settings could not verify (whole, verdict `held`, unless the user already has
    /// ``heldPerUser`` held), says so once per cause and user, and throws ``AppStoreSubmissionError/unverifiable(_:)``:
    /// the app keeps the transaction unfinished. A resend of a held submission changes nothing.
    func hold(_ signal: InboundSignal, userID: String, reason: String) async throws -> Never {
        struct OverCap: Error {}
        let now = context.clock.now()
        let kept: Bool
        do {
            kept = try await context.ledger.atomically { ledger in
                let entry = try await ledger.storeInbound(signal)
                guard entry.isNew else { return !entry.processed }
                guard try await ledger.heldSubmissionCount(headers: signal.headers) < Self.heldPerUser else {
                    throw OverCap()  // nothing of it is written
                }
                try await ledger.finishInbound(id: entry.id, verdict: .held, note: reason, at: now)
                return true
            }
        } catch is OverCap {
            kept = false
        }
        reportHeld(reason, userID: userID, kept: kept)
        throw AppStoreSubmissionError.unverifiable(reason)
    }

    /// Counts every held submission; logs at error level the first of each cause for each user (one wrong setting
    /// holds every purchase, so it must not go unnoticed — nor may one user's flood bury it).
    func reportHeld(_ reason: String, userID: String, kept: Bool) {
        Counter(label: "ordersafe_appstore_transactions_held_total").increment()
        if !kept { Counter(label: "ordersafe_appstore_transactions_held_not_kept_total").increment() }
        let key = HeldCause(reason: String(reason.prefix(300)), userID: userID)
        guard heldCauses.value(for: key) == nil else { return }
        heldCauses.remember(key, ())
        context.logger.error(
            """
            App Store transaction held: this server cannot verify it with its settings. Check appstore.bundle_id, \
            appstore.app_apple_id, appstore.environment and appstore.root_certificates, then replay the held transactions \
            (console: Operations; POST /v1/admin/appstore/held/replay)
            """,
            metadata: ["reason": "\(reason)", "user_id": "\(userID)", "kept": "\(kept)"])
    }

    /// Submits every held submission again, for the user who sent it, and applies every held notification, oldest
    /// first, a page at a time: what is still held is marked replayed (the purge may then drop it; it never drops one no replay has tried).
    public func replayHeld(pageSize: Int = 500) async throws -> HeldReplay {
        var replay = HeldReplay()
        var after: Int64 = 0
        while true {
            let page = try await context.ledger.heldSubmissions(after: after, limit: pageSize)
            for signal in page {
                after = signal.id
                if signal.headers["user_id"] == nil {
                    // A held notification (the App Store's own: it names no user) is applied as if it had just come.
                    switch try await handleNotification(body: signal.body) {
                    case .accepted: replay.recorded += 1
                    case .refused: replay.stillHeld += 1
                    }
                    continue
                }
                guard let userID = signal.headers["user_id"],
                    let submission = try? JSONDecoder().decode(AppStoreSubmission.self, from: Data(signal.body))
                else {
                    replay.failed += 1
                    continue
                }
                do {
                    _ = try await submit(submission, userID: userID)
                    replay.recorded += 1
                } catch AppStoreSubmissionError.unverifiable(let reason) {
                    replay.stillHeld += 1
                    try await context.ledger.finishInbound(
                        id: signal.id, verdict: .held, note: "replayed, still held: \(reason)",
                        at: context.clock.now())
                } catch {
                    replay.failed += 1
                }
            }
            if page.count < pageSize { break }
        }
        context.logger.notice(
            "held App Store transactions replayed",
            metadata: [
                "recorded": "\(replay.recorded)", "still_held": "\(replay.stillHeld)", "failed": "\(replay.failed)",
            ])
        return replay
    }
}

/// A cause of held submissions for one user: the operator hears of each once (while it is recent).
struct HeldCause: Hashable, Sendable {
    var reason: String
    var userID: String
}
