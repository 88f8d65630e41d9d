import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// Linux stand-in for StoreKit's `Product.SubscriptionOffer`: what a `PurchaseIntent` carries when the user tapped
    /// an offer on the App Store (iOS 18). Only its id and type are declared: the adapter reads nothing else.
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        public struct OfferType: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
            public static var winBack: OfferType { OfferType(rawValue: "win_back") }
        }

        /// The offer's id in App Store Connect; nil for an introductory offer.
        public let id: String?
        public let type: OfferType
    }
}
