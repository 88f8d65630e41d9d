/// What the user receives when an order for a product is fulfilled.
public enum Grant: Codable, Hashable, Sendable {
    /// Adds `amount` units to the user's balance called `balance` (coins, gems, credits).
    case addBalance(balance: String, amount: Int64)
    /// Unlocks the entitlement `entitlement` for good.
    case unlockEntitlement(entitlement: String)
    /// Extends the entitlement `entitlement` by `period` from the later of now and its current expiry.
    case extendEntitlement(entitlement: String, period: GrantPeriod)

    enum CodingKeys: String, CodingKey {
        case type, balance, amount, entitlement, period
    }

    /// The grant's `type` in the catalog file.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case addBalance = "add_balance"
        case unlockEntitlement = "unlock_entitlement"
        case extendEntitlement = "extend_entitlement"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .type) {
        case .addBalance:
            self = .addBalance(
                balance: try container.decode(String.self, forKey: .balance),
                amount: try container.decode(Int64.self, forKey: .amount))
        case .unlockEntitlement:
            self = .unlockEntitlement(entitlement: try container.decode(String.self, forKey: .entitlement))
        case .extendEntitlement:
            self = .extendEntitlement(
                entitlement: try container.decode(String.self, forKey: .entitlement),
                period: try container.decode(GrantPeriod.self, forKey: .period))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .addBalance(let balance, let amount):
            try container.encode(Kind.addBalance, forKey: .type)
            try container.encode(balance, forKey: .balance)
            try container.encode(amount, forKey: .amount)
        case .unlockEntitlement(let entitlement):
            try container.encode(Kind.unlockEntitlement, forKey: .type)
            try container.encode(entitlement, forKey: .entitlement)
        case .extendEntitlement(let entitlement, let period):
            try container.encode(Kind.extendEntitlement, forKey: .type)
            try container.encode(entitlement, forKey: .entitlement)
            try container.encode(period, forKey: .period)
        }
    }

    public var kind: Kind {
        switch self {
        case .addBalance: .addBalance
        case .unlockEntitlement: .unlockEntitlement
        case .extendEntitlement: .extendEntitlement
        }
    }

    /// The balance or entitlement this grant touches.
    public var target: String {
        switch self {
        case .addBalance(let balance, _): balance
        case .unlockEntitlement(let entitlement), .extendEntitlement(let entitlement, _): entitlement
        }
    }
}
