import Foundation

/// Body of `GET /v1/me/entitlements`: what the signed-in user owns.
public struct HoldingsResponse: Codable, Hashable, Sendable {
    public var userID: String
    public var balances: [Balance]
    public var entitlements: [Entitlement]

    public init(userID: String, balances: [Balance], entitlements: [Entitlement]) {
        self.userID = userID
        self.balances = balances
        self.entitlements = entitlements
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case balances, entitlements
    }
}

/// A named counter the user holds, such as coins.
public struct Balance: Codable, Hashable, Sendable {
    public var name: String
    /// May be negative after a refund of units already spent (the order is then flagged).
    public var amount: Int64

    public init(name: String, amount: Int64) {
        self.name = name
        self.amount = amount
    }
}

/// A named feature the user may use.
public struct Entitlement: Codable, Hashable, Sendable {
    public var name: String
    /// When it lapses; nil means it never does.
    public var expiresAt: Date?
    /// Whether it is in force at the time the response was made.
    public var active: Bool

    public init(name: String, expiresAt: Date?, active: Bool) {
        self.name = name
        self.expiresAt = expiresAt
        self.active = active
    }

    enum CodingKeys: String, CodingKey {
        case name, active
        case expiresAt = "expires_at"
    }
}
