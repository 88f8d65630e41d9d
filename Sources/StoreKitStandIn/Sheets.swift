import Foundation

/// Linux stand-in for UIKit's `UIWindowScene`: what StoreKit's sheets that manage subscriptions and request refunds
/// are shown over.
@MainActor
open class UIWindowScene: UIScene {}

@available(iOS 15.0, visionOS 1.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
@available(tvOS, unavailable)
extension AppStore {
    /// The App Store's subscription management sheet over `scene`: the device records it (the user may cancel,
    /// change plans or turn auto-renew off there; the App Store then notifies the merchant's server).
    @available(iOS 15.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try StandInDevice.current().showSheet("manage_subscriptions", scene: scene.title)
    }

    /// The same sheet opened on one subscription group (iOS 17).
    @available(iOS 17.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor public static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String)
        async throws
    {
        try StandInDevice.current().showSheet("manage_subscriptions:\(subscriptionGroupID)", scene: scene.title)
    }
}

extension AppStore {
    /// The App Store's offer-code redemption sheet over `scene` (iOS 16): the device records it. A code the user
    /// redeems there arrives as a transaction through `Transaction.updates` (the sandbox's `deliver` with
    /// `from: offer_code` plays the user's redemption).
    @available(iOS 16.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
        try StandInDevice.current().showSheet("offer_code_redemption", scene: scene.title)
    }
}

extension Transaction {
    /// How a refund request sheet ended: the request was sent to Apple (which decides later and tells the merchant's
    /// server: `REFUND` or `REFUND_DECLINED`), or the user closed the sheet.
    @available(iOS 15.0, macOS 12.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
    public enum RefundRequestStatus: Sendable, Hashable {
        case success
        case userCancelled
    }

    /// Apple's refund request sheet for transaction `transactionID` over `scene`: the device records it and
    /// answers as its user does (``StandInDevice/Unkindness/cancelsRefundRequests``).
    @available(iOS 15.0, visionOS 1.0, *)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor public static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene)
        async throws -> Transaction.RefundRequestStatus
    {
        let device = try StandInDevice.current()
        device.showSheet("refund_request:\(transactionID)", scene: scene.title)
        return device.unkindness.cancelsRefundRequests ? .userCancelled : .success
    }
}
