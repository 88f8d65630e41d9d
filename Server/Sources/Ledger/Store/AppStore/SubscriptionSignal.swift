import Foundation

/// One signed statement of the App Store about an auto-renewable subscription: a transaction (one period: its
/// product, its expiry, its refund) or the chain's renewal information (auto-renew, billing retry, grace period,
/// price increase). Instants are milliseconds since 1970, as Apple dates them.
public struct SubscriptionSignal: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case transaction, renewal
    }

    /// The chain's original transaction id.
    public var chain: String
    public var kind: Kind
    /// Apple's `signedDate`: of two versions of one transaction or of the renewal information, the later wins.
    public var signedAt: Int64

    // A transaction's.
    public var transactionID: String?
    public var groupID: String?
    public var productID: String?
    public var purchasedAt: Int64?
    public var expiresAt: Int64?
    public var revokedAt: Int64?
    /// Replaced by an upgrade at once (`isUpgraded`): its period no longer counts.
    public var upgraded: Bool?

    // The renewal information's.
    public var autoRenew: Bool?
    public var renewalProductID: String?
    public var expirationIntent: Int64?
    public var inBillingRetry: Bool?
    public var gracePeriodEndsAt: Int64?
    public var priceIncreaseStatus: Int64?

    /// The most signals one user's subscriptions are read with.
    public static let maxPerUser = 10_000

    public init(chain: String, kind: Kind, signedAt: Int64) {
        self.chain = chain
        self.kind = kind
        self.signedAt = signedAt
    }

    /// What a newer signal replaces: a transaction by its id, the renewal information as a whole.
    public var key: String { kind == .transaction ? transactionID ?? "" : "renewal" }

    /// Whether this one replaces `other` of the same key: signed later, or at the same millisecond and greater in its
    /// stored form (any fixed rule will do: arrival order must not).
    public func supersedes(_ other: SubscriptionSignal) -> Bool {
        if signedAt != other.signedAt { return signedAt > other.signedAt }
        // Signed in the same millisecond: a revoked version wins (Apple revokes after it sold; only a later-signed
        // REFUND_REVERSED undoes it), then the greater text, so any order of arrival keeps the same one.
        if (revokedAt != nil) != (other.revokedAt != nil) { return revokedAt != nil }
        return stored > other.stored
    }

    /// The JSON the ledger keeps (sorted keys: one signal, one text).
    public var stored: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
