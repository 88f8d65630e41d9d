import Foundation
import OrderSafeModel

/// What statement reconciliation reads and keeps: a day's recorded payments of one channel, and each day's report.
public protocol StatementBook: Sendable {
    /// The payments of `channel` recorded in `[from, before)`, oldest first, a page at a time: at most `limit` after
    /// `cursor` (nil: from the first), and where the page ended (nil when it was the last).
    func payments(channel: Channel, recordedFrom from: Date, before: Date, after cursor: PaymentCursor?, limit: Int)
        async throws -> (payments: [RecordedPayment], next: PaymentCursor?)
    /// How many payments of `channel` were recorded in `[from, before)`.
    func paymentCount(channel: Channel, recordedFrom from: Date, before: Date) async throws -> Int
    /// The payments of `channel` reversed (refunded or revoked) in `[from, before)`, oldest reversal first.
    func payments(channel: Channel, reversedFrom from: Date, before: Date) async throws -> [RecordedPayment]
    /// The latest payment's provider transaction of each user of `channel` who was active in `[from, before)` — made
    /// an order through it, had a payment of it recorded, or had a subscription whose period ended then — oldest
    /// first: whom to ask about a provider that keeps each customer's history (the App Store's transaction history),
    /// the day's possible buyers rather than everyone ever seen.
    func latestTransactionOfActiveUsers(channel: Channel, from: Date, before: Date) async throws -> [String]
    /// Keeps the run of `run.channel` and `run.day`, replacing the one before.
    func saveStatementRun(_ run: StatementRun) async throws
    /// The run of one channel's day, if it ran.
    func statementRun(channel: Channel, day: String) async throws -> StatementRun?
    /// The newest days first (by day, then channel), at most `limit`.
    func statementRuns(limit: Int) async throws -> [StatementRun]
}

/// How a statement day ended, as `statement_runs.status` stores it.
public enum StatementRunStatus: String, Sendable, Hashable, Codable {
    /// Every line of the statement is in the ledger, credited once with the same amount, and the reverse.
    case balanced
    /// At least one difference is flagged.
    case discrepancies
    /// The provider has not published the day's statement yet.
    case waiting
}

/// One channel's day checked against its provider's statement: its status and its report (JSON, the engine's).
public struct StatementRun: Sendable, Hashable {
    public var channel: Channel
    /// `yyyy-MM-dd` in the provider's zone.
    public var day: String
    public var status: StatementRunStatus
    public var report: String
    public var ranAt: Date

    public init(channel: Channel, day: String, status: StatementRunStatus, report: String, ranAt: Date) {
        self.channel = channel
        self.day = day
        self.status = status
        self.report = report
        self.ranAt = ranAt
    }
}

/// Where a page of a day's payments ended (its last payment's time and row): the next page starts after it.
public struct PaymentCursor: Sendable, Hashable {
    let recordedAt: Int64
    let id: Int64
}
