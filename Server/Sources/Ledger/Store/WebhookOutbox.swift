import Foundation

/// The merchant's webhook events waiting to be delivered, leased to one dispatcher at a time.
public protocol WebhookOutbox: Sendable {
    /// Leases up to `limit` undelivered webhook events that are due, oldest first, until `now + lease`.
    func claimWebhooks(limit: Int, lease: TimeInterval, now: Date) async throws -> [OutboxEvent]

    /// Logs an attempt and marks the event delivered or schedules its retry; false (and nothing but the log
    /// written) when another dispatcher has taken the event over since.
    func recordDelivery(_ event: OutboxEvent, _ attempt: DeliveryAttempt, at: Date) async throws -> Bool
}
