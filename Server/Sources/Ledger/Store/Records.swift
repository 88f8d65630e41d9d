import Foundation
import OrderSafeModel

/// A catalog as stored: every order points at the version it was priced from.
public struct CatalogVersion: Sendable, Hashable {
    public var id: Int64
    public var label: String
    public var sha256: String
}

/// How an order came to exist.
public enum OrderOrigin: String, Sendable {
    /// Created by the app through `POST /v1/orders`.
    case api
    /// Created by the server for a verified payment that named no order (an unbound App Store transaction).
    case adopted
}

/// The identity of a new order: its number and StoreKit `appAccountToken`.
public struct OrderIdentity: Sendable, Hashable {
    public var orderNo: String
    public var orderUUID: UUID

    public init(orderNo: String, orderUUID: UUID) {
        self.orderNo = orderNo
        self.orderUUID = orderUUID
    }
}

/// An `Idempotency-Key` and a digest of the request it came with.
public struct IdempotencyToken: Sendable, Hashable {
    public var key: String
    public var requestSHA256: String

    public init(key: String, requestSHA256: String) {
        self.key = key
        self.requestSHA256 = requestSHA256
    }
}

/// What the ledger needs to create an order.
public struct NewOrder: Sendable {
    public var userID: String
    public var productID: String
    public var channel: Channel
    public var amount: Money
    public var catalogVersionID: Int64
    public var origin: OrderOrigin
    public var idempotency: IdempotencyToken?
    public var createdAt: Date
    /// A job about the new order (its number as the key), scheduled in the same transaction as the order.
    public var followUp: FollowUp?

    public init(
        userID: String, productID: String, channel: Channel, amount: Money, catalogVersionID: Int64,
        origin: OrderOrigin = .api, idempotency: IdempotencyToken? = nil, createdAt: Date, followUp: FollowUp? = nil
    ) {
        self.followUp = followUp
        self.userID = userID
        self.productID = productID
        self.channel = channel
        self.amount = amount
        self.catalogVersionID = catalogVersionID
        self.origin = origin
        self.idempotency = idempotency
        self.createdAt = createdAt
    }
}

/// A job to schedule for an order when it is created: `kind`, keyed by the order number, due `after` seconds.
public struct FollowUp: Sendable, Hashable {
    public var kind: JobKind
    public var after: TimeInterval

    public init(kind: JobKind, after: TimeInterval) {
        self.kind = kind
        self.after = after
    }
}

/// Whether `createOrder` made a new order or found the one an earlier request with the same key made.
public enum OrderCreation: Sendable, Hashable {
    case created(Order)
    case replayed(Order)

    public var order: Order {
        switch self {
        case .created(let order), .replayed(let order): order
        }
    }
}

/// Who or what caused a state change (DESIGN.md invariant 7).
public enum EventCause: String, Sendable, Codable, CaseIterable {
    case app, notification, reconciliation, admin, system
}

/// A payment whose success we proved: a signature we verified or a provider answer we fetched.
public struct VerifiedPayment: Sendable, Hashable {
    public var channel: Channel
    /// The provider's transaction id (App Store `transactionId`, Alipay `trade_no`, WeChat `transaction_id`).
    public var providerTransactionID: String
    public var orderNo: String
    public var amount: Money
    public var cause: EventCause
    /// Names the proof, e.g. `inbox:42` or `jws-sha256:…`; never the payload itself.
    public var evidence: String
    /// Where the provider dates the subscription period this payment bought (App Store `expiresDate`): an
    /// entitlement it extends then runs until this date (or its later current end) instead of one catalog period
    /// from the moment it is recorded, so a restored old period grants nothing new.
    public var periodEnd: Date?
    /// A provider's test environment (App Store Sandbox): recorded and granted as usual, and the order is marked
    /// `sandbox` so it counts as no revenue.
    public var sandbox: Bool
    /// The subscription chain it belongs to (App Store `originalTransactionId`); nil when it makes no one the chain's
    /// owner (a family-shared transaction).
    public var originalTransactionID: String?
    /// The provider set the price (the App Store charges its storefront's price, or an offer's): the order takes
    /// the payment's amount instead of being flagged when they differ.
    public var pricedByProvider: Bool
    /// The offer the buyer took (`promotional:ID`, `win_back:ID`, `offer_code:NAME`, `introductory`), as the
    /// provider's transaction names it.
    public var offer: String?

    public init(
        channel: Channel, providerTransactionID: String, orderNo: String, amount: Money, cause: EventCause,
        evidence: String, periodEnd: Date? = nil, sandbox: Bool = false, originalTransactionID: String? = nil,
        pricedByProvider: Bool = false, offer: String? = nil
    ) {
        self.pricedByProvider = pricedByProvider
        self.offer = offer
        self.sandbox = sandbox
        self.originalTransactionID = originalTransactionID
        self.channel = channel
        self.providerTransactionID = providerTransactionID
        self.orderNo = orderNo
        self.amount = amount
        self.cause = cause
        self.evidence = evidence
        self.periodEnd = periodEnd
    }
}

/// Why an order needs a human.
public enum FlagReason: String, Sendable, Hashable, Codable {
    /// The provider's amount or currency differs from the order's.
    case amountMismatch = "amount_mismatch"
    /// A second, different provider transaction paid an order that was already settled.
    case orderAlreadySettled = "order_already_settled"
    /// A reversal took a balance below zero: the user had already spent what was refunded.
    case negativeBalance = "negative_balance"
    /// The provider says it paid this order with a transaction id already recorded for another order: one of the two
    /// claims is wrong (a provider fault, sandbox data sent to production, two merchants on one ledger), and the
    /// ledger does not guess which.
    case paymentIDConflict = "payment_id_conflict"
}

/// A provider transaction to look up and, for the App Store, the subscription chain whose owner is wanted and the
/// order the transaction names.
public struct PaymentQuery: Sendable, Hashable {
    public var channel: Channel
    public var providerTransactionID: String
    /// The chain's original transaction ID; nil when its owner is not wanted.
    public var chainOf: String?
    /// The order the transaction names; nil when none is wanted.
    public var order: OrderName?

    /// How a transaction names an order: by its UUID (an App Store transaction's `appAccountToken`, a StoreKit 1
    /// `applicationUsername` that is one), or by its number (a legacy `applicationUsername`, `"userID#orderNo"`).
    public enum OrderName: Sendable, Hashable {
        case uuid(UUID)
        case number(String)
    }

    public init(channel: Channel, providerTransactionID: String, chainOf: String?, order: OrderName? = nil) {
        self.channel = channel
        self.providerTransactionID = providerTransactionID
        self.chainOf = chainOf
        self.order = order
    }
}

/// What recording a provider transaction needs to know first, read at once: whether it is recorded, who owns its
/// subscription chain and whether stored signals wait for that owner, and the order it names.
public struct PaymentLookup: Sendable, Hashable {
    /// The payment recorded for it, if it was.
    public var payment: RecordedPayment?
    /// The owner of any recorded transaction of its chain (family-shared ones aside); nil when none is, or none was asked.
    public var chainOwner: String?
    /// Whether stored signals wait for its chain to gain an owner.
    public var signalsAwaitChain: Bool
    /// The order ``PaymentQuery/order`` names, if there is one. Looked up in a write, it is read locked and held for
    /// the write's payment of it (``HeldOrders``): paying it reads it no second time.
    public var namedOrder: Order?
}

/// A provider transaction as the ledger recorded it.
public struct RecordedPayment: Sendable, Hashable {
    public var orderNo: String
    public var userID: String
    public var channel: Channel
    public var providerTransactionID: String
    public var amount: Money
    /// Set once the payment was refunded or revoked.
    public var reversedAt: Date?
}

/// A provider's refund or revocation of a recorded payment.
public struct Reversal: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case refunded, revoked
    }

    /// What waits in `waiting_reversals` for its payment or for the reversal it cancels, as its `kind` stores it.
    enum Waiting: String, Sendable {
        case refunded, revoked
        /// A `REFUND_REVERSED` that overtook its reversal.
        case reinstated
    }

    public var channel: Channel
    public var providerTransactionID: String
    public var kind: Kind
    public var cause: EventCause
    /// Names the proof (`inbox:42`, `refund:…`); never the payload itself.
    public var evidence: String

    public init(channel: Channel, providerTransactionID: String, kind: Kind, cause: EventCause, evidence: String) {
        self.channel = channel
        self.providerTransactionID = providerTransactionID
        self.kind = kind
        self.cause = cause
        self.evidence = evidence
    }
}

/// What `reverse` did.
public enum ReversalOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The payment's grants were taken back; the order is refunded or revoked.
    case reversed(Order)
    /// Taken back, but a balance went below zero: the order is flagged for a human.
    case flagged(Order, FlagReason)
    /// This payment was reversed before; nothing changed.
    case alreadyReversed(orderNo: String)
    /// No payment with this provider transaction id was recorded yet: the reversal waits in the ledger and is applied
    /// when the payment is recorded.
    case unknownPayment
    /// A reinstatement of this payment (`REFUND_REVERSED`) had arrived first: the two cancel out, nothing changed.
    case cancelledByReinstatement

    public var description: String {
        switch self {
        case .reversed(let order): "\(order.status.rawValue) \(order.orderNo)"
        case .flagged(let order, let reason): "flagged \(order.orderNo): \(reason.rawValue)"
        case .alreadyReversed(let orderNo): "already reversed \(orderNo)"
        case .unknownPayment: "no such payment yet: waits for it"
        case .cancelledByReinstatement: "cancelled by an earlier reinstatement"
        }
    }
}

/// What `fulfil` did with a verified payment.
public enum FulfilmentOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Recorded now and granted: the order is fulfilled.
    case fulfilled(Order)
    /// This provider transaction was recorded before for this same order; nothing changed.
    case duplicate(orderNo: String)
    /// Recorded, not granted: the order is flagged for a human.
    case flagged(Order, FlagReason)
    /// This provider transaction was recorded before for another order (`recordedFor`): nothing is credited, and the
    /// order it claims to pay is flagged (``FlagReason/paymentIDConflict``) with the conflict kept as evidence, once
    /// per order and transaction; the order as it is now.
    case conflict(Order, recordedFor: String)

    public var description: String {
        switch self {
        case .fulfilled(let order): "fulfilled \(order.orderNo)"
        case .duplicate(let orderNo): "duplicate of \(orderNo)"
        case .flagged(let order, let reason): "flagged \(order.orderNo): \(reason.rawValue)"
        case .conflict(let order, let other): "conflict: \(order.orderNo) claims a payment recorded for \(other)"
        }
    }
}

/// One entry of an order's append-only history.
public struct OrderEvent: Sendable, Hashable {
    public var kind: OrderEventKind
    public var fromStatus: OrderStatus?
    public var toStatus: OrderStatus?
    public var cause: EventCause
    public var evidence: String?
    public var createdAt: Date
}

/// A raw inbound signal (provider notification), stored before it is processed.
public struct InboundSignal: Sendable, Hashable {
    public var channel: Channel
    public var kind: InboxKind
    public var headers: [String: String]
    public var body: [UInt8]
    public var receivedAt: Date

    public init(channel: Channel, kind: InboxKind, headers: [String: String], body: [UInt8], receivedAt: Date) {
        self.channel = channel
        self.kind = kind
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
    }
}

/// A stored inbound signal whose processing has not succeeded yet.
public struct PendingSignal: Sendable, Hashable {
    public var id: Int64
    public var channel: Channel
    public var headers: [String: String]
    public var body: [UInt8]
    public var attempts: Int
}

/// How processing an inbox entry ended, as `inbox.verdict` stores it.
public enum InboxVerdict: String, Sendable, Hashable {
    /// Applied (or nothing to apply): done.
    case applied
    /// Accepted but not applied yet (it waits for its order or payment): the sweep tries it again.
    case waiting
    /// Refused for an internal or passing reason (a 5xx): the sweep tries it again.
    case failed
    /// Unauthenticated bytes (a signature or format that failed): done, truncated, purged later.
    case refused
    /// An App Store submission this server could not verify with its own settings (bundle id, App Apple ID,
    /// environment, root certificates): kept whole, unprocessed, until an operator fixes the settings and replays
    /// it; the sweep leaves it alone (nothing changes until the settings do).
    case held
}

public struct InboxEntry: Sendable, Hashable {
    public var id: Int64
    public var isNew: Bool
    public var processed: Bool = false
}

/// Work the engine schedules for later: provider queries, closes, history pulls. Unique per (kind, key).
public struct NewJob: Sendable, Hashable {
    public var kind: JobKind
    /// What the job is about (an order number); one pending job per kind and key.
    public var key: String
    public var payload: String
    public var runAt: Date

    public init(kind: JobKind, key: String, payload: String = "", runAt: Date) {
        self.kind = kind
        self.key = key
        self.payload = payload
        self.runAt = runAt
    }
}

/// A job a worker holds until `leaseUntil`. Completing it needs the `fence` it was claimed with: a worker whose
/// lease ran out and was claimed again by another cannot complete it any more.
public struct ClaimedJob: Sendable, Hashable {
    public var id: Int64
    public var kind: JobKind
    public var key: String
    public var payload: String
    public var attempts: Int
    public var fence: Int64
    public var leaseUntil: Date
}

/// How a worker finished a job.
public enum JobResult: Sendable, Hashable {
    /// Nothing more to do.
    case done
    /// Run again at this time (the order is not final yet, or the provider was unavailable); a `payload` replaces
    /// the job's (a recurring job's watermark).
    case retry(at: Date, note: String?, payload: String? = nil)
}

/// A merchant webhook event waiting in the outbox, leased to one dispatcher.
public struct OutboxEvent: Sendable, Hashable {
    public var id: Int64
    /// Unique and stable across retries: the merchant's deduplication key.
    public var eventID: String
    public var type: WebhookEventType
    /// The JSON body, exactly as it will be signed and sent.
    public var payload: String
    /// Which attempt this is (1 for the first); completing needs it unchanged (the fence).
    public var attempt: Int
}

/// How one delivery attempt went.
public struct DeliveryAttempt: Sendable, Hashable {
    public var statusCode: Int?
    public var error: String?
    public var duration: TimeInterval
    /// Nil when delivered; otherwise when to try again.
    public var retryAt: Date?

    public init(statusCode: Int?, error: String?, duration: TimeInterval, retryAt: Date?) {
        self.statusCode = statusCode
        self.error = error
        self.duration = duration
        self.retryAt = retryAt
    }
}
