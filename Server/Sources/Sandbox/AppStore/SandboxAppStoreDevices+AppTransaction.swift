import Crypto
import Foundation

extension SandboxAppStoreDevices {
    /// The app's own purchase by the device's Apple ID as StoreKit's `AppTransaction.shared` gives it: signed by the
    /// store's authority, `receiptType` Sandbox, this app's bundle and Apple id, the version the Apple ID first had
    /// ("1.0", Apple's sandbox value, unless ``setOriginalAppVersion(_:device:)`` said otherwise), and an
    /// `appTransactionId` that is one per Apple ID (Apple: "unique for each Apple Account that downloads the app").
    public func appTransaction(device: String) async throws -> String {
        guard Self.isDeviceID(device) else { throw SandboxDeviceError.badDevice }
        let appleID = appleID(of: device)
        let now = SandboxAppStore.milliseconds(store.clock.now())
        let version = appDownloads[appleID]?.version ?? "1.0"
        let first = appDownloads[appleID]?.downloadedAt ?? now
        appDownloads[appleID] = (version, first)
        let digest = SHA256.hash(data: Data("app-transaction:\(appleID)".utf8))
        let number = digest.prefix(7).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000_000_000
        return try await store.sign([
            "receiptType": "Sandbox", "appAppleId": store.appAppleID, "bundleId": store.bundleID,
            "applicationVersion": "1.0", "originalApplicationVersion": version,
            "originalPurchaseDate": first, "receiptCreationDate": now, "requestDate": now,
            "appTransactionId": "70433\(number)", "originalPlatform": "iOS",
        ])
    }

    /// The version the device's Apple ID first downloaded (an app that was paid then, and is free now).
    public func setOriginalAppVersion(_ version: String, device: String) {
        let appleID = appleID(of: device)
        appDownloads[appleID] = (version, appDownloads[appleID]?.downloadedAt)
    }
}
