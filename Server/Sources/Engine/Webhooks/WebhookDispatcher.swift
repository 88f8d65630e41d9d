import ChannelSupport
import Foundation
import Ledger
import Logging
import OrderSafeModel

/// Delivers the ledger's outbox to the merchant's backend: each event POSTed as JSON with its id
/// (`OrderSafe-Event-Id`) and an HMAC-SHA256 signature (``WebhookSignature``), at least once, retried with
/// exponential backoff until a 2xx answer; every attempt is logged. Several dispatchers (replicas) may share one
/// ledger: events are leased, and a dispatcher whose lease ran out cannot mark an event it no longer holds.
public struct WebhookDispatcher: Sendable {
    let ledger: any WebhookOutbox
    let url: String
    let secret: String
    let transport: any ProviderTransport
    let clock: any WallClock
    let logger: Logger
    let timeout: Duration
    /// First retry after this many seconds, doubling up to `maxDelay`.
    let firstDelay: TimeInterval
    let maxDelay: TimeInterval

    public init(
        ledger: any WebhookOutbox, url: String, secret: String, transport: any ProviderTransport, clock: any WallClock,
        logger: Logger,
        timeout: Duration = .seconds(10), firstDelay: TimeInterval = 10, maxDelay: TimeInterval = 6 * 3600
    ) {
        self.ledger = ledger
        self.url = url
        self.secret = secret
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.timeout = timeout
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
    }

    /// Delivers the due events, batch after batch, in order; returns how many were delivered and how many will be
    /// retried. A batch's lease covers every delivery of it timing out one after another, so no other dispatcher
    /// claims an event of it while this one is still working through the batch.
    ///
    /// A batch of which nothing was delivered ends the pass: the endpoint is down or refusing, and the next pass asks
    /// again, each event on its own backoff — not every due event now, each a write and a warning (a backlog of
    /// 17,757 events was 17,757 of each per pass, and a shutdown waited for them). Cancelled (shutdown), it stops
    /// before the next event and throws `CancellationError`; what it claimed and did not try waits for its lease.
    public func deliverDue(batchSize: Int = 16) async throws -> (delivered: Int, failed: Int) {
        var delivered = 0
        var failed = 0
        let lease = Double(batchSize) * (Double(timeout.components.seconds) + 1) + 30
        while true {
            try Task.checkCancellation()
            let events = try await ledger.claimWebhooks(limit: batchSize, lease: lease, now: clock.now())
            if events.isEmpty { return (delivered, failed) }
            let deliveredBefore = delivered
            for event in events {
                try Task.checkCancellation()
                if try await deliver(event) { delivered += 1 } else { failed += 1 }
            }
            if delivered == deliveredBefore { return (delivered, failed) }
        }
    }

    private func deliver(_ event: OutboxEvent) async throws -> Bool {
        let body = Array(event.payload.utf8)
        let start = clock.now()
        let headers = [
            "Content-Type": "application/json", "User-Agent": "OrderSafe-Webhooks/1",
            "OrderSafe-Event-Id": event.eventID,
            "OrderSafe-Event-Type": event.type.rawValue,
            WebhookSignature.headerName: WebhookSignature.header(
                secret: secret, body: body, timestamp: Int64(start.timeIntervalSince1970)),
        ]
        var status: Int?
        var failure: String?
        do {
            let response = try await transport.send(
                method: "POST", url: url, headers: headers, body: body, timeout: timeout)
            status = response.status
            if !(200..<300).contains(response.status) { failure = "HTTP \(response.status)" }
        } catch {
            failure = "\(error)"
        }
        let now = clock.now()
        let retryAt = failure.map { _ in
            now.addingTimeInterval(min(maxDelay, firstDelay * pow(2, Double(min(event.attempt - 1, 30)))))
        }
        _ = try await ledger.recordDelivery(
            event,
            DeliveryAttempt(
                statusCode: status, error: failure, duration: now.timeIntervalSince(start), retryAt: retryAt), at: now)
        if let failure {
            logger.warning(
                "webhook not delivered; will retry",
                metadata: [
                    "event_id": "\(event.eventID)", "attempt": "\(event.attempt)", "error": "\(failure)",
                ])
        }
        return failure == nil
    }
}
