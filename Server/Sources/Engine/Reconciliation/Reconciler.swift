import Foundation
import Ledger
import Logging
import OrderSafeModel

/// Runs the ledger's jobs: asks providers about unsettled orders on a backoff schedule until they are final,
/// closing at the provider those left unpaid past their payment window. Every payment found is recorded
/// exactly as a notification would record it, so a lost notification loses nothing.
public struct Reconciler: Sendable {
    /// The job kinds this reconciler runs.
    let ledger: any OrderBook & SignalInbox & JobQueue
    let settlers: [Channel: any OrderSettler]
    let replayers: [Channel: any NotificationReplayer]
    /// What channels need done on a schedule, by job kind and key (several channels' chores share a kind).
    let chores: [ChoreID: any ChannelChore]
    /// What channels queue an item at a time, by job kind.
    let tasks: [JobKind: any ChannelTask]
    let clock: any WallClock
    let logger: Logger
    /// Seconds between queries, by attempt (the last repeats).
    let backoff: [TimeInterval]
    /// How long after its payment window an unpaid order is closed (the provider's clock may lag).
    let closeGrace: TimeInterval

    public init(
        ledger: any OrderBook & SignalInbox & JobQueue, settlers: [Channel: any OrderSettler],
        replayers: [Channel: any NotificationReplayer] = [:],
        chores: [any ChannelChore] = [], tasks: [any ChannelTask] = [], clock: any WallClock, logger: Logger,
        backoff: [TimeInterval] = [15, 30, 60, 120, 300, 600, 1800], closeGrace: TimeInterval = 60
    ) {
        self.ledger = ledger
        self.settlers = settlers
        self.replayers = replayers
        self.chores = Dictionary(
            chores.map { (ChoreID(kind: $0.kind, key: $0.key), $0) }, uniquingKeysWith: { first, _ in first })
        self.tasks = Dictionary(tasks.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        self.clock = clock
        self.logger = logger
        self.backoff = backoff
        self.closeGrace = closeGrace
    }

    /// Whether `channel`'s orders are settled by asking its provider (the App Store's by its notifications).
    public func queries(_ channel: Channel) -> Bool { settlers[channel] != nil }

    /// Whether `channel`'s stored notifications can be processed again.
    public func replays(_ channel: Channel) -> Bool { replayers[channel] != nil }

    /// Runs one claimed job and says how it ended; never throws (a failure is a retry).
    public func run(_ job: ClaimedJob) async -> JobResult {
        let now = clock.now()
        let later = now.addingTimeInterval(backoff[min(max(job.attempts - 1, 0), backoff.count - 1)])
        do {
            switch job.kind {
            case .queryOrder:
                var answer: SettlementState?
                return try await queryOrder(job.key, now: now, later: later, answer: &answer)
            case .retryInbox:
                try await retryInbox(now: now)
                return .retry(at: now.addingTimeInterval(Self.inboxSweepInterval), note: nil)
            case let kind:
                if let chore = chores[ChoreID(kind: kind, key: job.key)] {
                    let (next, payload) = try await chore.run(payload: job.payload, now: now)
                    return .retry(at: next, note: nil, payload: payload)
                }
                if let task = tasks[kind] {
                    try await task.run(key: job.key, payload: job.payload)
                    return .done
                }
                logger.error("unknown job kind", metadata: ["kind": "\(job.kind)", "job_id": "\(job.id)"])
                return .done
            }
        } catch let retry as ChoreRetry {
            logger.warning(
                "job failed; will retry",
                metadata: ["kind": "\(job.kind)", "key": "\(job.key)", "error": "\(retry)", "at": "\(retry.next)"])
            return .retry(at: retry.next, note: "\(retry)", payload: retry.payload)
        } catch {
            logger.warning(
                "job failed; will retry", metadata: ["kind": "\(job.kind)", "key": "\(job.key)", "error": "\(error)"])
            return .retry(at: later, note: "\(error)")
        }
    }

    /// Names one chore's job: its kind and key.
    struct ChoreID: Hashable {
        var kind: JobKind
        var key: String
    }

    /// How often stored notifications that failed are tried again.
    static let inboxSweepInterval: TimeInterval = 300

    /// Schedules the recurring jobs this configuration needs (idempotent: a pending one is kept).
    public func scheduleRecurring() async throws {
        let now = clock.now()
        try await ledger.enqueue(
            NewJob(kind: .retryInbox, key: "inbox", runAt: now.addingTimeInterval(Self.inboxSweepInterval)))
        for chore in chores.values {
            try await ledger.enqueue(NewJob(kind: chore.kind, key: chore.key, runAt: now))
        }
    }

    /// How long refused (unauthenticated) notifications are kept, truncated, and how many at most.
    static let refusedRetention: TimeInterval = 7 * 86400
    static let refusedKept = 100_000

    /// Stored notifications older than a minute whose processing failed (a database error, a crash) or that wait
    /// for their order are processed again, up to ten times each; refused ones past their retention go, and held
    /// ones beyond ``Inbox/heldKept``; reversals
    /// and reinstatements that passed their payment (replicas recording both at once) are applied.
    private func retryInbox(now: Date) async throws {
        let purged = try await ledger.purgeRefusedInbound(
            before: now.addingTimeInterval(-Self.refusedRetention), keeping: Self.refusedKept)
        if purged > 0 { logger.info("refused notifications purged", metadata: ["count": "\(purged)"]) }
        let dropped = try await ledger.purgeHeldSubmissions(keeping: Inbox.heldKept)
        if dropped > 0 {
            logger.warning(
                "held signals beyond the newest \(Inbox.heldKept) dropped",
                metadata: ["count": "\(dropped)"])
        }
        let stranded = try await ledger.applyStrandedReversals(at: now, limit: 200)
        if stranded > 0 {
            logger.notice(
                "reversals or reinstatements that passed their payment applied", metadata: ["count": "\(stranded)"])
        }
        let pending = try await ledger.pendingSignals(
            channels: Set(replayers.keys), before: now.addingTimeInterval(-60), maxAttempts: 10, limit: 200)
        for signal in pending {
            try await replayers[signal.channel]?.replay(signal)
        }
        if !pending.isEmpty { logger.info("stored notifications retried", metadata: ["count": "\(pending.count)"]) }
    }

    /// Processes one stored notification again by hand (an operator's replay), as the retry sweep would; false when
    /// its channel's notifications cannot be replayed (WeChat Pay's signed timestamps expire: query the order).
    public func replay(_ signal: PendingSignal) async throws -> Bool {
        guard let replayer = replayers[signal.channel] else { return false }
        try await replayer.replay(signal)
        return true
    }

    /// Asks the provider about one order now (also what the app's client-result hint triggers).
    public func settle(orderNo: String) async throws -> Order? {
        try await ask(orderNo: orderNo)?.order
    }

    /// As ``settle(orderNo:)``, with what the provider answered: nil when it was not asked (the order was final, or its
    /// channel is not queried).
    public func ask(orderNo: String) async throws -> (order: Order, answer: SettlementState?)? {
        var answer: SettlementState?
        _ = try await queryOrder(orderNo, now: clock.now(), later: clock.now(), answer: &answer)
        guard let order = try await ledger.order(number: orderNo) else { return nil }
        return (order, answer)
    }

    /// Cancels an unpaid order: closed at its provider first, then asked once more, so a payment that got in
    /// first is recorded (and the order answered as paid) instead of lost.
    public func cancel(_ order: Order) async throws -> Order {
        if let settler = settlers[order.channel] {
            if try await closeAndLookAgain(order, settler: settler, cause: .app) {
                return try await ledger.order(number: order.orderNo) ?? order
            }
        }
        return try await ledger.transition(
            orderNo: order.orderNo, from: [.created, .paying], to: .cancelled, cause: .app,
            evidence: "cancelled by the user", at: clock.now())
    }

    /// Closes the order at the provider, then looks once more: a payment that slipped in before the close (the
    /// provider then refuses to close) is recorded. True when it turned out paid; throws when neither worked.
    private func closeAndLookAgain(_ order: Order, settler: any OrderSettler, cause: EventCause) async throws -> Bool {
        var closeError: (any Error)?
        do {
            try await settler.close(order)
        } catch {
            closeError = error
        }
        if try await settler.settle(order, cause: cause) == .paid { return true }
        if let closeError { throw closeError }
        return false
    }

    private func queryOrder(_ orderNo: String, now: Date, later: Date, answer: inout SettlementState?) async throws
        -> JobResult
    {
        guard let order = try await ledger.order(number: orderNo), !order.status.isFinal,
            let settler = settlers[order.channel]
        else {
            return .done
        }
        let said = try await settler.settle(order, cause: .reconciliation)
        answer = said
        switch said {
        case .paid:
            return .done
        case .closed(let reason):
            _ = try await ledger.transition(
                orderNo: orderNo, from: [.created, .paying], to: .closed, cause: .reconciliation, evidence: reason,
                at: now)
            return .done
        case .pending, .unpaid:
            let closeAt = order.createdAt.addingTimeInterval(settler.paymentWindow + closeGrace)
            guard now >= closeAt else { return .retry(at: min(later, closeAt), note: "not paid yet") }
            if try await closeAndLookAgain(order, settler: settler, cause: .reconciliation) { return .done }
            _ = try await ledger.transition(
                orderNo: orderNo, from: [.created, .paying], to: .closed, cause: .reconciliation,
                evidence: "unpaid after the payment window; closed at \(order.channel.rawValue)", at: now)
            logger.info("unpaid order closed", metadata: ["order_no": "\(orderNo)"])
            return .done
        }
    }
}
