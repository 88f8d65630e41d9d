/// A promotional offer of an auto-renewable subscription (its offer id in App Store Connect) and who may have it: the
/// server signs it only for a user the rule admits, so an offer id that ships in an app is no discount for anyone.
public struct PromotionalOffer: Codable, Hashable, Sendable {
    public var id: String
    /// The subscribers it is for, by their state in the product's subscription group.
    public var eligible: [OfferAudience]
    /// What else the rule asks (a window after expiry, a limit per user, the merchant's word).
    public var rule: OfferRule
    /// What its first period costs, as set up in App Store Connect (the sandbox App Store charges it; the console
    /// shows it). The ledger records what Apple's transaction says was charged, whatever this says.
    public var price: Money?

    public init(id: String, eligible: [OfferAudience], rule: OfferRule = OfferRule(), price: Money? = nil) {
        self.id = id
        self.eligible = eligible
        self.rule = rule
        self.price = price
    }

    enum CodingKeys: String, CodingKey { case id, eligible, price }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        eligible = try container.decode([OfferAudience].self, forKey: .eligible)
        price = try container.decodeIfPresent(Money.self, forKey: .price)
        rule = try OfferRule(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(eligible, forKey: .eligible)
        try container.encodeIfPresent(price, forKey: .price)
        try rule.encode(to: encoder)
    }
}

/// A win-back offer of an auto-renewable subscription (its offer id in App Store Connect), for a subscriber whose
/// subscription expired: in the catalog an id, or an object with the id and a rule (`within_days`, `per_user`,
/// `ask_merchant`) and `price`.
public struct WinBackOffer: Codable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var id: String
    public var rule: OfferRule
    /// What its first period costs, as set up in App Store Connect (see ``PromotionalOffer/price``).
    public var price: Money?

    public init(id: String, rule: OfferRule = OfferRule(), price: Money? = nil) {
        self.id = id
        self.rule = rule
        self.price = price
    }

    enum CodingKeys: String, CodingKey { case id, price }

    public init(stringLiteral id: String) {
        self.init(id: id)
    }

    public init(from decoder: any Decoder) throws {
        if let id = try? decoder.singleValueContainer().decode(String.self) {
            self.init(id: id)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id), rule: try OfferRule(from: decoder),
            price: try container.decodeIfPresent(Money.self, forKey: .price))
    }

    public func encode(to encoder: any Encoder) throws {
        guard rule != OfferRule() || price != nil else {
            var single = encoder.singleValueContainer()
            try single.encode(id)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(price, forKey: .price)
        try rule.encode(to: encoder)
    }
}

/// What an offer asks beyond the subscriber's state, in the offer's own object in the catalog.
public struct OfferRule: Codable, Hashable, Sendable {
    /// A subscriber whose subscription expired may have it only this many days after it ended (`within_days`).
    public var withinDays: Int?
    /// How many purchases with it one user may make (`per_user`).
    public var perUser: Int?
    /// The merchant's backend must say yes for each signature (`ask_merchant`; `offer_hook` in the settings).
    public var askMerchant: Bool

    public init(withinDays: Int? = nil, perUser: Int? = nil, askMerchant: Bool = false) {
        self.withinDays = withinDays
        self.perUser = perUser
        self.askMerchant = askMerchant
    }

    enum CodingKeys: String, CodingKey {
        case withinDays = "within_days"
        case perUser = "per_user"
        case askMerchant = "ask_merchant"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        withinDays = try container.decodeIfPresent(Int.self, forKey: .withinDays)
        perUser = try container.decodeIfPresent(Int.self, forKey: .perUser)
        askMerchant = try container.decodeIfPresent(Bool.self, forKey: .askMerchant) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(withinDays, forKey: .withinDays)
        try container.encodeIfPresent(perUser, forKey: .perUser)
        if askMerchant { try container.encode(askMerchant, forKey: .askMerchant) }
    }

    /// What the rule says, for a timeline or a page: `within 30 days, 1 per user, asked the merchant`.
    public var summary: String {
        var parts: [String] = []
        if let withinDays { parts.append("within \(withinDays) days") }
        if let perUser { parts.append("\(perUser) per user") }
        if askMerchant { parts.append("merchant decides") }
        return parts.joined(separator: ", ")
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
