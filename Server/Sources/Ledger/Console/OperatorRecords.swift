import Foundation
import OrderSafeModel

/// What the operator console and the admin API read: orders by filter, one order's whole history, the overview,
/// and the queues that need an operator.
public protocol OperatorReads: Sendable {
    /// One page of orders, newest first, after `query.after` (keyset pagination).
    func orders(_ query: OrderQuery) async throws -> OrderPage
    /// An order with its history (a page of its events from the `eventsFrom`-th), payments, grants and webhook
    /// events; nil when there is no such order.
    func dossier(orderNo: String, eventsFrom: Int) async throws -> OrderDossier?
    /// The last `days` days in `zone`: revenue, orders by status, and the queues that need an operator.
    func overview(now: Date, days: Int, zone: TimeZone) async throws -> LedgerOverview
    /// Unfinished reconciliation jobs, soonest first.
    func queuedJobs(limit: Int) async throws -> [QueuedJob]
    /// Stored signals not done whose processing failed, waits, or is held, newest first.
    func inboxProblems(limit: Int) async throws -> [InboxProblem]
    /// A stored notification not done yet, to process again by hand; nil when there is none with that id.
    func unfinishedNotification(id: Int64) async throws -> PendingSignal?
    /// The latest webhook delivery attempts, newest first.
    func webhookAttempts(limit: Int) async throws -> [WebhookAttemptRecord]
    /// The operators' log, newest first.
    func operatorActions(limit: Int) async throws -> [OperatorAction]
    /// How many App Store submissions are held for their verification.
    func heldSubmissionCount() async throws -> Int
}

extension OperatorReads {
    /// An order with the first page of its history.
    public func dossier(orderNo: String) async throws -> OrderDossier? {
        try await dossier(orderNo: orderNo, eventsFrom: 0)
    }
}

/// What operators do, each step in the operators' log (and, for an order, in its history).
public protocol OperatorActions: Sendable {
    /// Appends to the operators' log.
    func logOperatorAction(_ action: OperatorAction) async throws
    /// Appends an operator's action on an order to its history and to the operators' log.
    func noteOperatorAction(orderNo: String, _ action: OperatorAction) async throws
    /// Resolves a flagged order with a note; the status stays `flagged`, the flag stops waiting.
    func resolveFlag(orderNo: String, operatorName: String, note: String, at date: Date) async throws
        -> ConsoleActionOutcome
    /// Schedules a webhook event to be sent again now.
    func redeliverWebhook(eventID: String, operatorName: String, at date: Date) async throws -> ConsoleActionOutcome
}

/// The console's sign-in sessions, kept under their tokens' SHA-256.
public protocol ConsoleSessionStore: Sendable {
    func openSession(tokenSHA256: String, _ session: ConsoleSessionRecord) async throws
    func session(tokenSHA256: String) async throws -> ConsoleSessionRecord?
    func touchSession(tokenSHA256: String, at date: Date) async throws
    /// Ends a session (logged with `action` unless nil), and deletes every session idle since before `idleBefore`.
    func closeSession(tokenSHA256: String, action: OperatorAction?, idleBefore: Date) async throws
}

extension SQLLedger: OperatorReads, OperatorActions, ConsoleSessionStore, SubscriptionReads {}
