import Foundation
import OrderSafeModel

/// What the orders list is asked for: filters, and where the page starts.
public struct OrderQuery: Sendable, Hashable {
    /// An order number, a provider transaction id or an original transaction id (exact), else a user id.
    public var search: String?
    public var userID: String?
    public var status: OrderStatus?
    public var channel: Channel?
    public var productID: String?
    /// Created at or after (inclusive).
    public var createdFrom: Date?
    /// Created before (exclusive).
    public var createdBefore: Date?
    /// The page starts after this order (newest first).
    public var after: OrderCursor?
    public var limit: Int

    public init(
        search: String? = nil, userID: String? = nil, status: OrderStatus? = nil, channel: Channel? = nil,
        productID: String? = nil,
        createdFrom: Date? = nil, createdBefore: Date? = nil, after: OrderCursor? = nil, limit: Int = 50
    ) {
        self.search = search
        self.userID = userID
        self.status = status
        self.channel = channel
        self.productID = productID
        self.createdFrom = createdFrom
        self.createdBefore = createdBefore
        self.after = after
        self.limit = limit
    }

    /// The most orders one page holds.
    public static let maxLimit = 200
}

/// A position in the orders list (newest first): the last order of a page, as `<created_at ms>_<row id>`.
public struct OrderCursor: Sendable, Hashable, CustomStringConvertible {
    public var createdAt: Int64
    public var id: Int64

    public init(createdAt: Int64, id: Int64) {
        self.createdAt = createdAt
        self.id = id
    }

    /// Parses the text form strictly: two decimal numbers of at most 19 digits, non-negative.
    public init?(_ text: String) {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard text.utf8.count <= 40, parts.count == 2,
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 19 && $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let createdAt = Int64(parts[0]), let id = Int64(parts[1])
        else { return nil }
        self.init(createdAt: createdAt, id: id)
    }

    public var description: String { "\(createdAt)_\(id)" }
}

/// One page of orders, newest first, and where the next one starts (nil on the last page).
public struct OrderPage: Sendable, Hashable {
    public var orders: [Order]
    public var next: OrderCursor?
}

/// The numbers on the console's overview.
public struct LedgerOverview: Sendable, Hashable {
    /// Paid revenue of one day (in the asked time zone), one channel and one currency; sandbox orders excluded.
    public struct RevenueDay: Sendable, Hashable {
        /// `YYYY-MM-DD` in the asked zone.
        public var day: String
        public var channel: Channel
        public var amount: Money
        public var payments: Int
    }

    public var revenue: [RevenueDay]
    public var ordersByStatus: [OrderStatus: Int]
    /// Flagged orders no operator has resolved.
    public var flaggedWaiting: Int
    /// Reconciliation jobs due now and later.
    public var jobsDue: Int
    public var jobsLater: Int
    /// The oldest order still `created` or `paying`.
    public var oldestUnsettled: Order?
    /// Webhook events not delivered whose last attempt failed.
    public var webhooksFailing: Int
    /// Stored notifications whose processing failed and that are not done.
    public var inboxFailed: Int
    /// App Store submissions this server could not verify with its settings (``InboxVerdict/held``).
    public var heldSubmissions: Int
}

/// Everything the ledger holds about one order, for an operator.
public struct OrderDossier: Sendable, Hashable {
    public struct Event: Sendable, Hashable {
        public var kind: OrderEventKind
        public var fromStatus: OrderStatus?
        public var toStatus: OrderStatus?
        public var cause: EventCause
        public var evidence: String?
        /// An operator's note (a flag's resolution).
        public var note: String?
        public var createdAt: Date
    }

    public struct Payment: Sendable, Hashable {
        public var channel: Channel
        public var providerTransactionID: String
        public var originalTransactionID: String?
        public var amount: Money
        public var cause: EventCause
        public var evidence: String
        public var recordedAt: Date
        public var reversal: Reversal.Kind?
        public var reversedAt: Date?
    }

    public struct GrantRecord: Sendable, Hashable {
        public var providerTransactionID: String
        public var kind: Grant.Kind
        public var target: String
        public var amount: Int64?
        public var period: String?
        public var expiresAt: Date?
        public var reversedAt: Date?
    }

    public struct Webhook: Sendable, Hashable {
        public var eventID: String
        public var type: WebhookEventType
        public var createdAt: Date
        public var attempts: Int
        public var deliveredAt: Date?
        public var lastError: String?
    }

    /// A stored provider signal an event or payment names as its evidence (`inbox:<id>`), and how its
    /// verification and processing ended.
    public struct Signal: Sendable, Hashable {
        public var id: Int64
        public var channel: Channel
        public var kind: InboxKind
        public var receivedAt: Date
        public var processedAt: Date?
        public var attempts: Int
        /// nil while it is being processed.
        public var verdict: InboxVerdict?
        public var lastError: String?
        public var bodySHA256: String
        public var bodyBytes: Int64
    }

    /// A provider transaction id claimed by one order while recorded for another (``FlagReason/paymentIDConflict``).
    public struct Conflict: Sendable, Hashable {
        public var channel: Channel
        public var providerTransactionID: String
        /// The order the provider's signal claimed was paid by it (flagged).
        public var claimingOrderNo: String
        /// The order the transaction was recorded for first.
        public var recordedOrderNo: String
        public var amount: Money
        public var cause: EventCause
        /// What made the claim (`inbox:<id>`, `alipay.trade.query`, …).
        public var evidence: String
        public var createdAt: Date
    }

    public var order: Order
    /// Flagged, and no operator has resolved the flag since.
    public var flagWaiting: Bool
    /// A page of the order's events, oldest first, from the ``eventsFrom``-th of ``eventCount``.
    public var events: [Event]
    public var eventCount: Int
    public var eventsFrom: Int
    public var payments: [Payment]
    public var grants: [GrantRecord]
    public var webhooks: [Webhook]
    public var signals: [Signal]
    /// Conflicts this order is either side of, oldest first.
    public var conflicts: [Conflict]

    /// The inbox entries `text` names as `inbox:<id>`.
    public static func signalIDs(in text: String) -> [Int64] {
        var ids: [Int64] = []
        var rest = Substring(text)
        while let range = rest.range(of: "inbox:") {
            let digits = rest[range.upperBound...].prefix { $0.isASCII && $0.isNumber }.prefix(18)
            if let id = Int64(digits) { ids.append(id) }
            rest = rest[range.upperBound...]
        }
        return ids
    }

    /// Events a page of ``events`` holds at most: an order's page stays small however long its history grows.
    public static let eventsPerPage = 200
}

/// A job of the reconciliation queue that is not finished.
public struct QueuedJob: Sendable, Hashable {
    public var id: Int64
    public var kind: JobKind
    public var key: String
    public var runAt: Date
    public var attempts: Int
    public var leaseOwner: String?
    public var leaseUntil: Date?
    public var lastError: String?
}

/// A stored signal whose processing failed or waits, for an operator to see and replay.
public struct InboxProblem: Sendable, Hashable {
    public var id: Int64
    public var channel: Channel
    public var kind: InboxKind
    public var receivedAt: Date
    public var attempts: Int
    public var verdict: InboxVerdict?
    public var lastError: String?
}

/// One attempt to deliver a merchant webhook.
public struct WebhookAttemptRecord: Sendable, Hashable {
    public var eventID: String
    public var type: WebhookEventType
    public var orderNo: String?
    public var attempt: Int
    public var attemptedAt: Date
    public var statusCode: Int?
    public var error: String?
    public var durationMS: Int64
}

/// A signed-in operator's session, as stored (the token itself is never stored, only its SHA-256).
public struct ConsoleSessionRecord: Sendable, Hashable {
    public var operatorName: String
    public var csrfToken: String
    public var createdAt: Date
    public var lastSeenAt: Date

    public init(operatorName: String, csrfToken: String, createdAt: Date, lastSeenAt: Date) {
        self.operatorName = operatorName
        self.csrfToken = csrfToken
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
    }
}

/// An operator's action, for the append-only audit log (sign-in, sign-out, refund, …).
public struct OperatorAction: Sendable, Hashable {
    public var operatorName: String
    public var action: OperatorActionKind
    public var target: String?
    public var detail: String?
    public var at: Date

    public init(
        operatorName: String, action: OperatorActionKind, target: String? = nil, detail: String? = nil, at: Date
    ) {
        self.operatorName = operatorName
        self.action = action
        self.target = target
        self.detail = detail
        self.at = at
    }
}
