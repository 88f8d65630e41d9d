/// A promotional offer of an auto-renewable subscription (its offer id in App Store Connect) and who may have it: the
/// server signs it only for a user the rule admits, so an offer id that ships in an app is no discount for anyone.
public struct PromotionalOffer: Codable, Hashable, Sendable {
    public var id: String
    /// The subscribers it is for, by their state in the product's subscription group.
    public var eligible: [OfferAudience]

    public init(id: String, eligible: [OfferAudience]) {
        self.id = id
        self.eligible = eligible
    }
}

/// Who an offer is for: a user who never subscribed in the product's group, or one whose subscription there is in
/// this state (as `GET /v1/me/subscriptions` names it).
public enum OfferAudience: String, Codable, Hashable, Sendable, CaseIterable {
    case neverSubscribed = "never_subscribed"
    case active
    case inGracePeriod = "in_grace_period"
    case inBillingRetry = "in_billing_retry"
    case expired
    case revoked

    /// The audience a subscriber in `state` belongs to (nil: never subscribed).
    public init(_ state: SubscriptionState?) {
        switch state {
        case nil: self = .neverSubscribed
        case .active: self = .active
        case .inGracePeriod: self = .inGracePeriod
        case .inBillingRetry: self = .inBillingRetry
        case .expired: self = .expired
        case .revoked: self = .revoked
        }
    }
}
