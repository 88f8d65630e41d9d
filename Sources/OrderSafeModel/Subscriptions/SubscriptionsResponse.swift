import Foundation

/// Body of `GET /v1/me/subscriptions`: the signed-in user's auto-renewable subscriptions, one per subscription group.
public struct SubscriptionsResponse: Codable, Hashable, Sendable {
    public var userID: String
    public var subscriptions: [UserSubscription]

    public init(userID: String, subscriptions: [UserSubscription]) {
        self.userID = userID
        self.subscriptions = subscriptions
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case subscriptions
    }
}

/// Where one subscription group of a user stands, from the App Store's signed transactions and renewal information
/// (each taken in Apple's `signedDate` order, whatever order they arrived in). Not `SubscriptionStatus`: StoreKit
/// names its own so (iOS 18.4), and an app imports both.
public struct UserSubscription: Codable, Hashable, Sendable {
    /// App Store Connect's subscription group.
    public var groupID: String
    public var state: SubscriptionState
    /// Why it expired, when it did and Apple said (`expirationIntent`).
    public var expirationReason: ExpirationReason?
    /// The product of the period now (or last) paid for.
    public var productID: String
    /// The product the next period renews to (an upgrade takes effect at once, a downgrade at the next renewal).
    public var renewalProductID: String?
    /// Whether it renews at the end of the period; nil: no renewal information yet.
    public var autoRenew: Bool?
    /// The end of the period paid for.
    public var expiresAt: Date?
    /// The end of the billing grace period: access is kept until then while Apple retries the payment.
    public var gracePeriodEndsAt: Date?
    /// A price increase the subscriber was told of: `pending` (not answered yet) or `accepted`.
    public var priceIncrease: PriceIncrease?
    /// The newest transaction of the subscription (its period's) and the subscription's first one.
    public var lastTransactionID: String
    public var originalTransactionID: String
    /// The win-back offers the catalog lists for its product, once it has expired: what the app may offer a lapsed
    /// subscriber (signed by `POST /v1/appstore/offers/{offer_id}/signature`).
    public var winBackOffers: [String]?
    /// Where the user reads every period of it: `/v1/me/subscriptions/{original_transaction_id}/history`.
    public var history: String {
        "/v1/me/subscriptions/\(originalTransactionID)/history"
    }

    public init(
        groupID: String, state: SubscriptionState, expirationReason: ExpirationReason? = nil, productID: String,
        renewalProductID: String? = nil, autoRenew: Bool? = nil, expiresAt: Date? = nil, gracePeriodEndsAt: Date? = nil,
        priceIncrease: PriceIncrease? = nil, lastTransactionID: String, originalTransactionID: String,
        winBackOffers: [String]? = nil
    ) {
        self.winBackOffers = winBackOffers
        self.groupID = groupID
        self.state = state
        self.expirationReason = expirationReason
        self.productID = productID
        self.renewalProductID = renewalProductID
        self.autoRenew = autoRenew
        self.expiresAt = expiresAt
        self.gracePeriodEndsAt = gracePeriodEndsAt
        self.priceIncrease = priceIncrease
        self.lastTransactionID = lastTransactionID
        self.originalTransactionID = originalTransactionID
    }

    enum CodingKeys: String, CodingKey {
        case state
        case groupID = "group_id"
        case expirationReason = "expiration_reason"
        case productID = "product_id"
        case renewalProductID = "renewal_product_id"
        case autoRenew = "auto_renew"
        case expiresAt = "expires_at"
        case gracePeriodEndsAt = "grace_period_ends_at"
        case priceIncrease = "price_increase"
        case lastTransactionID = "last_transaction_id"
        case originalTransactionID = "original_transaction_id"
        case winBackOffers = "win_back_offers"
        case history
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        groupID = try container.decode(String.self, forKey: .groupID)
        state = try container.decode(SubscriptionState.self, forKey: .state)
        expirationReason = try container.decodeIfPresent(ExpirationReason.self, forKey: .expirationReason)
        productID = try container.decode(String.self, forKey: .productID)
        renewalProductID = try container.decodeIfPresent(String.self, forKey: .renewalProductID)
        autoRenew = try container.decodeIfPresent(Bool.self, forKey: .autoRenew)
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        gracePeriodEndsAt = try container.decodeIfPresent(Date.self, forKey: .gracePeriodEndsAt)
        priceIncrease = try container.decodeIfPresent(PriceIncrease.self, forKey: .priceIncrease)
        lastTransactionID = try container.decode(String.self, forKey: .lastTransactionID)
        originalTransactionID = try container.decode(String.self, forKey: .originalTransactionID)
        winBackOffers = try container.decodeIfPresent([String].self, forKey: .winBackOffers)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(groupID, forKey: .groupID)
        try container.encode(state, forKey: .state)
        try container.encodeIfPresent(expirationReason, forKey: .expirationReason)
        try container.encode(productID, forKey: .productID)
        try container.encodeIfPresent(renewalProductID, forKey: .renewalProductID)
        try container.encodeIfPresent(autoRenew, forKey: .autoRenew)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(gracePeriodEndsAt, forKey: .gracePeriodEndsAt)
        try container.encodeIfPresent(priceIncrease, forKey: .priceIncrease)
        try container.encode(lastTransactionID, forKey: .lastTransactionID)
        try container.encode(originalTransactionID, forKey: .originalTransactionID)
        try container.encodeIfPresent(winBackOffers, forKey: .winBackOffers)
        try container.encode(history, forKey: .history)
    }
}

/// A subscription's state, as Apple's subscription status names them.
public enum SubscriptionState: String, Codable, Hashable, Sendable, CaseIterable {
    /// The period paid for has not ended.
    case active
    /// Billing failed and Apple retries within the grace period: access is kept until ``UserSubscription/gracePeriodEndsAt``.
    case inGracePeriod = "in_grace_period"
    /// Billing failed and Apple retries: no access; ask the subscriber to fix their payment method.
    case inBillingRetry = "in_billing_retry"
    /// Ended (see ``UserSubscription/expirationReason``).
    case expired
    /// Refunded or revoked (Family Sharing ended): no access.
    case revoked

    /// Whether the subscriber has access in this state.
    public var grantsAccess: Bool { self == .active || self == .inGracePeriod }
}

/// Why a subscription expired (`expirationIntent` 1 to 5).
public enum ExpirationReason: String, Codable, Hashable, Sendable, CaseIterable {
    /// The subscriber turned auto-renew off.
    case voluntary
    /// Billing failed and the retries ran out.
    case billingError = "billing_error"
    /// The subscriber did not accept a price increase.
    case priceIncreaseDeclined = "price_increase_declined"
    /// The product was not for sale at renewal.
    case productUnavailable = "product_unavailable"
    case other

    /// Apple's `expirationIntent`; nil for a value Apple has not defined.
    public init?(expirationIntent: Int64) {
        switch expirationIntent {
        case 1: self = .voluntary
        case 2: self = .billingError
        case 3: self = .priceIncreaseDeclined
        case 4: self = .productUnavailable
        case 5: self = .other
        default: return nil
        }
    }
}

/// A price increase's answer (`priceIncreaseStatus`: 0 not answered, 1 accepted or only notified).
public enum PriceIncrease: String, Codable, Hashable, Sendable {
    case pending, accepted
}
