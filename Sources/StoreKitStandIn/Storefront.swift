import Foundation

/// Linux stand-in for StoreKit's `Storefront`: the storefront of the connected ``StandInDevice`` (the sandbox App
/// Store sells in one, China mainland's, unless the device says otherwise).
public struct Storefront: Identifiable, Sendable {
    /// ISO 3166-1 alpha-3.
    public let countryCode: String
    public let id: String

    init(countryCode: String, id: String) {
        self.countryCode = countryCode
        self.id = id
    }

    /// Nil when no device is connected or the device is signed out of the App Store.
    public static var current: Storefront? {
        get async { (try? StandInDevice.current())?.storefront }
    }
}

extension Storefront {
    /// Linux stand-in for StoreKit's `Storefront.Storefronts`: the connected device's storefront changes.
    public struct Storefronts: AsyncSequence, Sendable {
        public typealias Element = Storefront
        let stream: AsyncStream<Storefront>

        public struct AsyncIterator: AsyncIteratorProtocol {
            var iterator: AsyncStream<Storefront>.AsyncIterator
            public mutating func next() async -> Storefront? { await iterator.next() }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(iterator: stream.makeAsyncIterator()) }
    }

    /// Each storefront the device moves to from now on; none without a connected device.
    public static var updates: Storefronts {
        Storefronts(stream: (try? StandInDevice.current())?.storefrontChanges() ?? AsyncStream { $0.finish() })
    }
}
