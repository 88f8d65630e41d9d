import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product.SubscriptionInfo {
    /// Linux stand-in for StoreKit's `Product.SubscriptionInfo.RenewalState`: Apple's status codes.
    public struct RenewalState: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let subscribed = RenewalState(rawValue: 1)
        public static let expired = RenewalState(rawValue: 2)
        public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
        public static let inGracePeriod = RenewalState(rawValue: 4)
        public static let revoked = RenewalState(rawValue: 5)
    }

    /// Linux stand-in for StoreKit's `Product.SubscriptionInfo.RenewalInfo`: what the adapter reads of it.
    public struct RenewalInfo: Equatable, Hashable, Sendable {
        public let originalTransactionID: UInt64
        public let currentProductID: String
        public let willAutoRenew: Bool
        public let autoRenewPreference: String?
        public let isInBillingRetry: Bool
        public let gracePeriodExpirationDate: Date?
    }

    /// Linux stand-in for StoreKit's `Product.SubscriptionInfo.Status`.
    public struct Status: Sendable {
        public let state: RenewalState
        public let transaction: VerificationResult<Transaction>
        public let renewalInfo: VerificationResult<RenewalInfo>
    }

    /// Each subscription of group `groupID` the device's Apple ID has, as the App Store knows it now.
    public static func status(for groupID: String) async throws -> [Status] {
        try await StandInDevice.current().subscriptionStatuses(groupID: groupID)
    }
}
