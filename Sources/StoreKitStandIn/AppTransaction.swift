import Foundation

/// Linux stand-in for StoreKit's `AppTransaction` (iOS 16): the app's own purchase by the device's Apple ID, as the
/// sandbox App Store's device queue signs it.
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
public struct AppTransaction: Sendable {
    public let appVersion: String
    public let bundleID: String
    /// The version the Apple ID first bought or downloaded.
    public let originalAppVersion: String
    public let originalPurchaseDate: Date
    /// The compact JWS the store signed, as received.
    let signed: String

    /// The app transaction of the connected device's Apple ID.
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { try await StandInDevice.current().appTransaction() }
    }
}

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension VerificationResult where SignedType == AppTransaction {
    /// The compact JWS the store signed, as received.
    public var jwsRepresentation: String { unsafePayloadValue.signed }
}
