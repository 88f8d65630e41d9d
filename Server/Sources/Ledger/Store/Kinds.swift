import OrderSafeModel

/// What a job does, as `jobs.kind` stores it. An open set: a job of a kind this version does not know (a newer
/// replica's) is read as it is and reported, never dropped.
public struct JobKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Query an Alipay or WeChat Pay order (key: the order number).
    public static let queryOrder = JobKind(rawValue: "query_order")
    /// Process again stored notifications whose processing failed, and apply reversals and reinstatements that
    /// passed their payment on another replica (recurring).
    public static let retryInbox = JobKind(rawValue: "retry_inbox")
    /// Pull the App Store's notification history since the last pull (recurring; the payload is where the last pull
    /// ended, in milliseconds).
    public static let appStoreHistory = JobKind(rawValue: "appstore_history")
    /// Check yesterday's statement of a channel against the ledger (recurring, keyed by channel; the payload is the
    /// last day checked).
    public static let statements = JobKind(rawValue: "statements")
    /// Pull the App Store history of a subscription chain that just gained its first owner (key: the transaction id,
    /// payload: the owner), once its purchase is answered.
    public static let appStoreChainHistory = JobKind(rawValue: "appstore_chain_history")
}

/// What came in, as `inbox.kind` stores it.
public enum InboxKind: String, Sendable, Hashable {
    /// A provider's notification (retried by the inbox sweep until applied).
    case notify
    /// An App Store transaction the app submitted.
    case submission
    /// An App Store restore the app asked for.
    case sync
}

/// What an order event records, as `order_events.kind` stores it: the status the order moved to, or a note that
/// changes none. An open set (notes carry what a provider or the app said).
public struct OrderEventKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The order moved to `status` (`created`, `paid`, `fulfilled`, `refunded`, …).
    public static func status(_ status: OrderStatus) -> OrderEventKind { OrderEventKind(rawValue: status.rawValue) }
    public static let created = status(.created)
    /// A reversed payment was reinstated (the App Store's `REFUND_REVERSED`).
    public static let reinstated = OrderEventKind(rawValue: "reinstated")
    /// A subscription period's provider-dated end moved later.
    public static let periodExtended = OrderEventKind(rawValue: "period_extended")
    /// A subscription offer was signed for the order's purchase (the evidence names the offer and its nonce).
    public static let offerSigned = OrderEventKind(rawValue: "offer_signed")
    /// A provider reported a refund of part of the amount (not reversed: an operator looks at it).
    public static let partialRefund = OrderEventKind(rawValue: "partial_refund")
    /// Another user than the order's owner submitted its App Store transaction.
    public static let submittedByOtherUser = OrderEventKind(rawValue: "submitted_by_other_user")
    /// An operator resolved a flag.
    public static let flagResolved = OrderEventKind(rawValue: "flag_resolved")
    /// The order was flagged for a human, with why.
    public static func flagged(_ reason: FlagReason) -> OrderEventKind {
        OrderEventKind(rawValue: "flagged:\(reason.rawValue)")
    }
    /// What the app reported from the provider's SDK (a hint).
    public static func clientResult(_ result: String) -> OrderEventKind {
        OrderEventKind(rawValue: "client_result:\(result)")
    }
    /// The subscription whose latest period the order paid for is now in `state` (`subscription:in_grace_period`).
    public static func subscription(_ state: SubscriptionState) -> OrderEventKind {
        OrderEventKind(rawValue: "subscription:\(state.rawValue)")
    }
    /// An App Store notification about the order's transaction (`type` as Apple names it, lowercased here).
    public static func appStore(_ type: String) -> OrderEventKind {
        OrderEventKind(rawValue: "appstore:\(type.lowercased())")
    }
}
