import Foundation
import OrderSafeModel

/// The orders and their money: catalog versions, orders, payments recorded against them, reversals, status moves and
/// the audit trail. What the order engine writes and reads; every method is one database transaction (or joins the
/// write it is called in, ``LedgerWrite``), and idempotency comes from the schema's constraints.
public protocol OrderBook: Sendable {
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

    /// In one read: the payment recorded for a provider transaction; about the subscription chain the query names, its
    /// owner and whether signals wait for one; and the order it names. In a write, that order is read locked and held
    /// for the write's payment of it.
    func payment(_ query: PaymentQuery) async throws -> PaymentLookup

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
    func note(orderNo: String, kind: OrderEventKind, cause: EventCause, evidence: String?, at: Date, atMost: Int?)
        async throws
        -> Bool

    /// How many of the user's orders created since `since` are still unpaid (`created` or `paying`).
    func unpaidOrderCount(userID: String, since: Date) async throws -> Int

    /// Whether the user has an order made with this idempotency key.
    func hasOrder(userID: String, idempotencyKey: String) async throws -> Bool
}

extension OrderBook {
    /// Appends an event that changes no status, however many the order has.
    public func note(orderNo: String, kind: OrderEventKind, cause: EventCause, evidence: String?, at date: Date)
        async throws
    {
        try await note(orderNo: orderNo, kind: kind, cause: cause, evidence: evidence, at: date, atMost: nil)
    }

    /// In one read: the payment recorded for a provider transaction, and about the subscription chain whose original
    /// transaction is `originalTransactionID` (nil: none asked), its owner and whether signals wait for one.
    public func payment(channel: Channel, providerTransactionID: String, chainOf originalTransactionID: String?)
        async throws -> PaymentLookup
    {
        try await payment(
            PaymentQuery(channel: channel, providerTransactionID: providerTransactionID, chainOf: originalTransactionID)
        )
    }
}
