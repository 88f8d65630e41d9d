import Foundation

/// Linux stand-in for StoreKit's `AppStore`.
public enum AppStore {
    /// Whether this device may pay (parental controls can forbid it).
    public static var canMakePayments: Bool { (try? StandInDevice.current().canMakePayments) ?? false }

    /// Asks the store for the account's transactions again (on iOS, prompts the user to sign in).
    public static func sync() async throws {
        try await StandInDevice.current().sync()
    }
}

/// Linux stand-in for StoreKit's `StoreKitError`.
public enum StoreKitError: Error, Sendable {
    case unknown
    case userCancelled
    case networkError(URLError)
    case systemError(any Error)
    case notAvailableInStorefront
    @available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, visionOS 1.0, *)
    case notEntitled
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
    case unsupported
}
