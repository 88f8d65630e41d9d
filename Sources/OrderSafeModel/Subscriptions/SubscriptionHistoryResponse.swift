import Foundation

/// Body of `GET /v1/me/subscriptions/{original_transaction_id}/history`: every period of one of the user's
/// subscriptions the App Store has told the server of, oldest first.
public struct SubscriptionHistoryResponse: Codable, Hashable, Sendable {
    public var originalTransactionID: String
    public var periods: [SubscriptionHistoryPeriod]

    public init(originalTransactionID: String, periods: [SubscriptionHistoryPeriod]) {
        self.originalTransactionID = originalTransactionID
        self.periods = periods
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "original_transaction_id"
        case periods
    }
}

/// One period of a subscription: the transaction that bought it.
public struct SubscriptionHistoryPeriod: Codable, Hashable, Sendable {
    public var transactionID: String
    /// The App Store product id.
    public var productID: String
    public var purchasedAt: Date?
    public var expiresAt: Date?
    /// When Apple refunded or revoked it.
    public var revokedAt: Date?
    /// Replaced at once by an upgrade: it no longer counts.
    public var upgraded: Bool

    public init(
        transactionID: String, productID: String, purchasedAt: Date?, expiresAt: Date?, revokedAt: Date? = nil,
        upgraded: Bool = false
    ) {
        self.transactionID = transactionID
        self.productID = productID
        self.purchasedAt = purchasedAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.upgraded = upgraded
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case productID = "product_id"
        case purchasedAt = "purchased_at"
        case expiresAt = "expires_at"
        case revokedAt = "revoked_at"
        case upgraded
    }
}
