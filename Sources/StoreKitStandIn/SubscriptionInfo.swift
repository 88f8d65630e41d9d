import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// Linux stand-in for StoreKit's `Product.SubscriptionPeriod`.
    public struct SubscriptionPeriod: Equatable, Hashable, Sendable {
        public enum Unit: Equatable, Hashable, Sendable {
            case day
            case week
            case month
            case year
        }
        public let unit: Unit
        public let value: Int
    }

    /// Linux stand-in for StoreKit's `Product.SubscriptionInfo`: an auto-renewable subscription's group, period and
    /// offers as the device's store describes them.
    public struct SubscriptionInfo: Equatable, Hashable, Sendable {
        public let introductoryOffer: SubscriptionOffer?
        public let promotionalOffers: [SubscriptionOffer]
        public let subscriptionGroupID: String
        public let subscriptionPeriod: SubscriptionPeriod
        let winBack: [SubscriptionOffer]

        /// StoreKit's has it from iOS 18 only: the stand-in says so, so the adapter must check.
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public var winBackOffers: [SubscriptionOffer] { winBack }

        init(
            introductoryOffer: SubscriptionOffer?, promotionalOffers: [SubscriptionOffer],
            winBackOffers: [SubscriptionOffer], subscriptionGroupID: String, subscriptionPeriod: SubscriptionPeriod
        ) {
            self.introductoryOffer = introductoryOffer
            self.promotionalOffers = promotionalOffers
            self.winBack = winBackOffers
            self.subscriptionGroupID = subscriptionGroupID
            self.subscriptionPeriod = subscriptionPeriod
        }
    }
}
