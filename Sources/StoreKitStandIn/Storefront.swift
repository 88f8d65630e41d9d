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
