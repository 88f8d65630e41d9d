import Foundation

/// One auto-renewable subscription as StoreKit on this device knows it (`Product.SubscriptionInfo.Status`): to
/// show beside the server's ``OrderSafe/subscriptions(allowCached:)``, never instead of it.
public struct StoreSubscriptionStatus: Sendable, Hashable {
    /// `Product.SubscriptionInfo.RenewalState`.
    public enum State: String, Sendable, Hashable, CaseIterable {
        case subscribed, expired, inBillingRetryPeriod, inGracePeriod, revoked, unknown
    }

    public var state: State
    /// The App Store product id of its latest transaction.
    public var productID: String
    public var originalTransactionID: UInt64
    public var expirationDate: Date?
    public var willAutoRenew: Bool
    /// The product it renews to (another of the group after a downgrade or crossgrade).
    public var autoRenewProductID: String?
    /// Whether StoreKit verified its transaction and renewal information on this device.
    public var isVerified: Bool

    public init(
        state: State, productID: String, originalTransactionID: UInt64, expirationDate: Date?, willAutoRenew: Bool,
        autoRenewProductID: String?, isVerified: Bool
    ) {
        self.state = state
        self.productID = productID
        self.originalTransactionID = originalTransactionID
        self.expirationDate = expirationDate
        self.willAutoRenew = willAutoRenew
        self.autoRenewProductID = autoRenewProductID
        self.isVerified = isVerified
    }
}
