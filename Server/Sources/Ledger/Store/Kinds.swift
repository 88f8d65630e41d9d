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
    /// Check yesterday's statement of a channel against the ledger (recurring, keyed by channel; the payload is the
    /// last day checked).
    public static let statements = JobKind(rawValue: "statements")
    // A channel's own kinds are declared in its folder (the App Store's in `Engine/AppStore/AppStoreKinds.swift`).
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
    /// A merchant's refund of the order, asked for by the evidence's operator, that the provider's notification of
    /// the same refund recorded first.
    public static let refundRequested = OrderEventKind(rawValue: "refund_requested")
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
    /// A provider's notification about the order's payment: `<channel>:<type>`, the type as the provider names it,
    /// lowercased.
    public static func notification(_ channel: Channel, _ type: String) -> OrderEventKind {
        OrderEventKind(rawValue: "\(channel.rawValue):\(type.lowercased())")
    }
}

/// What a merchant webhook announces, as `webhook_outbox.event_type` stores it and the payload's `type` says: an
/// order's new status (`order.fulfilled`, …) or a subscription's new state. An open set, read as stored.
public struct WebhookEventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The order moved to `status`.
    public static func order(_ status: OrderStatus) -> WebhookEventType {
        WebhookEventType(rawValue: "order.\(status.rawValue)")
    }
    /// A subscription's state, period or renewal changed (the payload carries the order of its latest period).
    public static let subscriptionUpdated = WebhookEventType(rawValue: "subscription.updated")
}

/// What an operator did, as the audit log's `action` stores it. An open set: an action a newer replica logged is
/// read as it is.
public struct OperatorActionKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// An operator asked an order's provider for its state.
    public static let queryProvider = OperatorActionKind(rawValue: "query_provider")
    /// An operator checked a day's statement again.
    public static let reconcileStatement = OperatorActionKind(rawValue: "reconcile_statement")
    /// An operator sent a webhook event again.
    public static let redeliverWebhook = OperatorActionKind(rawValue: "redeliver_webhook")
    /// An operator refunded an order at its provider.
    public static let refund = OperatorActionKind(rawValue: "refund")
    /// An operator replayed a channel's held signals (the target names the channel).
    public static let replayHeldSubmissions = OperatorActionKind(rawValue: "replay_held_submissions")
    /// An operator processed a stored notification again.
    public static let replayNotification = OperatorActionKind(rawValue: "replay_notification")
    /// An operator resolved a flagged order.
    public static let resolveFlag = OperatorActionKind(rawValue: "resolve_flag")
    /// An operator signed in.
    public static let signIn = OperatorActionKind(rawValue: "sign_in")
    /// A sign-in was refused (a wrong password or an unknown name).
    public static let signInRefused = OperatorActionKind(rawValue: "sign_in_refused")
    /// An operator signed out.
    public static let signOut = OperatorActionKind(rawValue: "sign_out")
}
