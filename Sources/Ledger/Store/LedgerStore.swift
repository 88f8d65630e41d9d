import Foundation
import OrderSafeModel

/// The ledger's operations: the seam between the order engine and persistence.
///
/// Every method is one database transaction; idempotency comes from the schema's constraints.
public protocol LedgerStore: Sendable {
    /// Runs `body` as one transaction: every ledger operation it calls joins it, and it returns once all of them
    /// have committed together (or none has, when it throws). `body` runs on the ledger's writer: it must do only
    /// ledger work, never wait for a provider or the network.
    func atomically<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R

    /// Stores a catalog (once per distinct content) and returns the version orders will reference.
    func saveCatalog(_ catalog: Catalog, at: Date) async throws -> CatalogVersion

    /// Creates an order, or with a repeated idempotency key returns the order the first request created.
    /// Throws ``LedgerError/idempotencyConflict(key:)`` when the key was used with a different request.
    func createOrder(_ order: NewOrder, identity: @Sendable () -> OrderIdentity) async throws -> OrderCreation

    func order(number: String) async throws -> Order?
    func order(uuid: UUID) async throws -> Order?
    func events(orderNo: String) async throws -> [OrderEvent]

    /// Records a verified payment and applies the order's grants, exactly once per provider transaction.
    func fulfil(_ payment: VerifiedPayment, at: Date) async throws -> FulfilmentOutcome

    /// Creates `new` (an order adopted for a payment that came without one) and records `payment` against it in one
    /// step: the order's row is written once, as the payment leaves it. Nil, with nothing changed, when the order's
    /// number, UUID or idempotency key is taken or the payment was recorded before: the caller then creates the
    /// order and fulfils it apart, which says what was there.
    func fulfil(_ payment: VerifiedPayment, adopting new: NewOrder, as identity: OrderIdentity, at: Date) async throws
        -> FulfilmentOutcome?

    /// The order and user a provider transaction was recorded for, if it was.
    func payment(channel: Channel, providerTransactionID: String) async throws -> RecordedPayment?

    /// In one read: the payment recorded for a provider transaction, and about the subscription chain whose original
    /// transaction is `originalTransactionID` (nil: none asked), its owner and whether signals wait for one.
    func payment(channel: Channel, providerTransactionID: String, chainOf originalTransactionID: String?) async throws
        -> PaymentLookup

    /// Every provider transaction recorded against the order, oldest first.
    func payments(orderNo: String) async throws -> [RecordedPayment]

    /// Reverses exactly what a recorded payment granted (a refund or a revocation), once.
    func reverse(_ reversal: Reversal, at: Date) async throws -> ReversalOutcome

    /// Applies what two replicas recording signals of one payment at once can leave waiting — a reversal beside its
    /// recorded payment, a reinstatement beside its reversed payment — at most `limit`; returns how many were applied.
    func applyStrandedReversals(at: Date, limit: Int) async throws -> Int

    /// Undoes a reversal (the App Store's `REFUND_REVERSED`): the payment's grants are applied again, once, and
    /// its order is fulfilled again. Nil when the payment was not reversed (or is unknown).
    func reinstate(channel: Channel, providerTransactionID: String, cause: EventCause, evidence: String, at: Date)
        async throws -> Order?

    /// Moves the provider-dated end of a recorded, unreversed subscription payment later (the App Store's
    /// `RENEWAL_EXTENDED`, or the same transaction seen again with a later `expiresDate`) and extends what it
    /// granted to match; returns the order number, or nil when nothing moved (unknown, reversed, not
    /// provider-dated, or not later).
    func extendPeriod(
        channel: Channel, providerTransactionID: String, until: Date, cause: EventCause, evidence: String, at: Date
    )
        async throws -> String?

    /// Moves an order between non-final statuses (`created → paying`, `created|paying → cancelled|closed|failed`),
    /// appending the event; returns the order as it is afterwards (unchanged when it had already moved on).
    func transition(
        orderNo: String, from: Set<OrderStatus>, to: OrderStatus, cause: EventCause, evidence: String?, at: Date
    )
        async throws -> Order

    /// Appends an event that changes no status (a hint from the app, a refused submission), for the audit trail.
    /// With `atMost`, only while the order has fewer events of `cause` than that (what a client may grow is
    /// bounded); answers whether it was kept.
    @discardableResult
    func note(orderNo: String, kind: String, cause: EventCause, evidence: String?, at: Date, atMost: Int?) async throws
        -> Bool

    /// How many of the user's orders created since `since` are still unpaid (`created` or `paying`).
    func unpaidOrderCount(userID: String, since: Date) async throws -> Int

    /// Whether the user has an order made with this idempotency key.
    func hasOrder(userID: String, idempotencyKey: String) async throws -> Bool

    /// Schedules a job, or moves the pending one of the same kind and key earlier; a finished one is opened again.
    /// An empty payload keeps the one stored (a recurring job's watermark survives a restart).
    func enqueue(_ job: NewJob) async throws

    /// Leases up to `limit` due jobs to `owner` until `now + lease`. Safe with several workers and replicas:
    /// PostgreSQL skips rows another transaction holds (`FOR UPDATE SKIP LOCKED`); SQLite has one writer.
    func claimJobs(owner: String, limit: Int, lease: TimeInterval, now: Date) async throws -> [ClaimedJob]

    /// Finishes a claimed job; false when the fence no longer matches (the lease expired and another worker
    /// claimed the job), in which case nothing is written.
    func complete(_ job: ClaimedJob, _ result: JobResult, at: Date) async throws -> Bool

    /// Unfinished jobs: how many are due at `now`, and how many wait for later.
    func pendingJobs(now: Date) async throws -> (due: Int, later: Int)

    /// Leases up to `limit` undelivered webhook events that are due, oldest first, until `now + lease`.
    func claimWebhooks(limit: Int, lease: TimeInterval, now: Date) async throws -> [OutboxEvent]

    /// Logs an attempt and marks the event delivered or schedules its retry; false (and nothing but the log
    /// written) when another dispatcher has taken the event over since.
    func recordDelivery(_ event: OutboxEvent, _ attempt: DeliveryAttempt, at: Date) async throws -> Bool

    /// The user's balances and entitlements.
    func holdings(userID: String, at: Date) async throws -> HoldingsResponse

    /// Stores a raw inbound signal before anything else happens to it.
    func storeInbound(_ signal: InboundSignal) async throws -> InboxEntry

    /// Inside a write that applies the signal in full: stores it as already applied at `date` (it commits with what
    /// the write records, or not at all), one statement instead of an insert and an update. An entry stored before
    /// is returned as it is, for the caller to finish.
    func storeInbound(_ signal: InboundSignal, appliedAt date: Date) async throws -> InboxEntry

    /// As ``storeInbound(_:appliedAt:)``, and looks `query` up with it (on PostgreSQL in the same statement, one
    /// round trip fewer), for a write whose next step is that lookup. The lookup does not see the entry.
    func storeInbound(_ signal: InboundSignal, appliedAt date: Date, lookingUp query: PaymentQuery) async throws
        -> (entry: InboxEntry, lookup: PaymentLookup)

    /// Stored notifications (not app submissions) of `channels` not processed yet, received before `before`, tried fewer than `maxAttempts`
    /// times: for the retry sweep.
    func pendingSignals(channels: Set<Channel>, before: Date, maxAttempts: Int, limit: Int) async throws
        -> [PendingSignal]

    /// Marks a waiting inbox entry as waiting for `chain` to gain an owner.
    func awaitChain(inboxID: Int64, chain: String, signedAt: Int64?) async throws

    /// The inbox entries waiting for `chain`, in the provider's order.
    func signalsAwaiting(chain: String) async throws -> [PendingSignal]

    /// Records how processing an inbound signal ended (see ``InboxVerdict``).
    func finishInbound(id: Int64, verdict: InboxVerdict, note: String?, at: Date) async throws

    /// Deletes refused (unauthenticated) entries received before `before`, and the oldest beyond `keeping`.
    @discardableResult
    func purgeRefusedInbound(before: Date, keeping: Int) async throws -> Int

    /// App Store submissions held for their verification (``InboxVerdict/held``), oldest first.
    func heldSubmissions(limit: Int) async throws -> [PendingSignal]

    /// Deletes held submissions beyond the newest `keeping` (their devices keep the transactions unfinished and
    /// submit them again).
    @discardableResult
    func purgeHeldSubmissions(keeping: Int) async throws -> Int
}

extension LedgerStore {
    /// Appends an event that changes no status, however many the order has.
    public func note(orderNo: String, kind: String, cause: EventCause, evidence: String?, at date: Date) async throws {
        try await note(orderNo: orderNo, kind: kind, cause: cause, evidence: evidence, at: date, atMost: nil)
    }
}
