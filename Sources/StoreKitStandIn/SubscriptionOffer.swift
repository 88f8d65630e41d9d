import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// Linux stand-in for StoreKit's `Product.SubscriptionOffer`: an introductory, promotional or win-back offer of a
    /// subscription as App Store Connect has it set up, and what a `PurchaseIntent` carries when the user tapped an
    /// offer on the App Store (iOS 18).
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        public struct OfferType: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
            public static var winBack: OfferType { OfferType(rawValue: "win_back") }
        }

        public struct PaymentMode: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let payAsYouGo = PaymentMode(rawValue: "pay_as_you_go")
            public static let payUpFront = PaymentMode(rawValue: "pay_up_front")
            public static let freeTrial = PaymentMode(rawValue: "free_trial")
        }

        /// The offer's id in App Store Connect; nil for an introductory offer.
        public let id: String?
        public let type: OfferType
        public let price: Decimal
        public let displayPrice: String
        public let period: SubscriptionPeriod
        public let periodCount: Int
        public let paymentMode: PaymentMode

        init(
            id: String?, type: OfferType, price: Decimal, displayPrice: String, period: SubscriptionPeriod,
            periodCount: Int, paymentMode: PaymentMode
        ) {
            self.id = id
            self.type = type
            self.price = price
            self.displayPrice = displayPrice
            self.period = period
            self.periodCount = periodCount
            self.paymentMode = paymentMode
        }
    }
}
