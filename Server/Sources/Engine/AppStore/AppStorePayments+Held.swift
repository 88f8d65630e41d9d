import AppStore
import Foundation
import Ledger
import Metrics
import OrderSafeModel

/// Submissions held because this server could not verify them with its settings (``AppStoreSubmissionError/unverifiable(_:)``):
/// said loudly, kept (bounded), and recorded for their submitters once an operator fixed the settings and replays them.
extension AppStorePayments {
    /// A StoreKit 2 signed transaction is a few KiB (its certificate chain and payload); a larger body is no
    /// transaction and is not held.
    static let maxHeldTransactionBytes = 16 * 1024
    /// Held submissions kept at most; the devices keep older ones unfinished and submit them again.
    public static let heldKept = 10_000

    /// What a replay of the held submissions did.
    public struct HeldReplay: Sendable, Hashable, Codable {
        /// Verified now and recorded (or found recorded) for their submitters.
        public var recorded: Int
        /// Still not verifiable with the settings as they are.
        public var stillHeld: Int
        /// Verified, but not recordable now (a product missing from the catalog, the database): kept as failed.
        public var failed: Int

        enum CodingKeys: String, CodingKey {
            case recorded
            case stillHeld = "still_held"
            case failed
        }
    }

    /// Whether a verification failure is this server's settings' to decide: a wrong bundle or app id, environment,
    /// or set of trusted roots fails every genuine purchase alike.
    static func dependsOnSettings(_ error: VerificationError) -> Bool {
        switch error {
        case .invalidAppIdentifier, .invalidEnvironment, .invalidChain: true
        case .invalidJWTFormat, .invalidCertificate, .verificationFailure, .invalidChainLength,
            .retryableVerificationFailure:
            false
        }
    }

    /// Logs at error level and counts: one wrong setting holds every purchase, so it must not go unnoticed.
    func reportHeld(_ error: any Error) {
        Counter(label: "ordersafe_appstore_transactions_held_total").increment()
        context.logger.error(
            """
            App Store transaction held: this server cannot verify it with its settings. Check appstore.bundle_id, \
            appstore.app_apple_id, appstore.environment and appstore.root_certificates, then replay the held transactions \
            (console: Operations; POST /v1/admin/appstore/held/replay)
            """,
            metadata: ["reason": "\(error)"])
    }

    /// Submits every held submission again, for the user who sent it, oldest first (at most `limit`).
    public func replayHeld(limit: Int = 1_000) async throws -> HeldReplay {
        var replay = HeldReplay(recorded: 0, stillHeld: 0, failed: 0)
        for signal in try await context.ledger.heldSubmissions(limit: limit) {
            guard let userID = signal.headers["user_id"],
                let submission = try? JSONDecoder().decode(AppStoreSubmission.self, from: Data(signal.body))
            else {
                replay.failed += 1
                continue
            }
            do {
                _ = try await submit(submission, userID: userID)
                replay.recorded += 1
            } catch AppStoreSubmissionError.unverifiable {
                replay.stillHeld += 1
            } catch {
                replay.failed += 1
            }
        }
        context.logger.notice(
            "held App Store transactions replayed",
            metadata: [
                "recorded": "\(replay.recorded)", "still_held": "\(replay.stillHeld)", "failed": "\(replay.failed)",
            ])
        return replay
    }
}
