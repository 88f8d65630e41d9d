import Foundation

/// Linux stand-in for StoreKit's `PurchaseIntent`: a purchase the user started on the App Store (a promoted in-app
/// purchase, a win-back offer), delivered to the app, which completes it with `product.purchase(options:)`. The
/// intents come from the device queue (`POST /sandbox/appstore/devices/{device}/promoted-purchase` makes one).
@available(iOS 16.4, macOS 14.4, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
public struct PurchaseIntent: Equatable, Sendable {
    public let product: Product
    /// The offer the user tapped on the App Store with the product (a win-back or promotional offer), if any.
    @available(iOS 18.0, macOS 15.0, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    public let offer: Product.SubscriptionOffer?

    @available(iOS 16.4, macOS 14.4, *)
    @available(tvOS, unavailable)
    @available(watchOS, unavailable)
    @available(visionOS, unavailable)
    public var id: Product.ID { product.id }
}

@available(iOS 16.4, macOS 14.4, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
extension PurchaseIntent {
    /// The intents as the user starts them, for as long as it is iterated (each is delivered once, as on iOS).
    public static var intents: PurchaseIntents { PurchaseIntents() }

    public struct PurchaseIntents: AsyncSequence, Sendable {
        public typealias Element = PurchaseIntent

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }

        public struct AsyncIterator: AsyncIteratorProtocol {
            var buffer: [PurchaseIntent] = []

            public mutating func next() async -> PurchaseIntent? {
                while buffer.isEmpty {
                    if Task.isCancelled { return nil }
                    buffer = (try? await StandInDevice.current().purchaseIntents()) ?? []
                    if buffer.isEmpty { try? await Task.sleep(for: StandInDevice.updatePollInterval) }
                }
                return buffer.removeFirst()
            }
        }
    }
}
