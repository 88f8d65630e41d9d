import Ledger

/// A channel whose stored notifications can be processed again from the inbox (verification does not depend on
/// when they are processed): the retry sweep's seam. WeChat Pay's signed timestamps expire after five minutes, so
/// its unprocessed notifications are settled by querying the order instead.
public protocol NotificationReplayer: Sendable {
    /// Processes the stored signal again, exactly as if it had just arrived.
    func replay(_ signal: PendingSignal) async throws
}
