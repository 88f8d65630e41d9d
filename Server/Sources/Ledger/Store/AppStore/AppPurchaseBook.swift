import Foundation
import OrderSafeModel

/// The app's own purchases (`AppTransaction`) each user's phones showed the server: one per user and Apple ID.
public protocol AppPurchaseBook: Sendable {
    /// Keeps `purchase` for `userID` (again: its latest word replaces the last), unless the user has
    /// ``AppPurchaseLimit/perUser`` others already; answers whether it is kept.
    func noteAppPurchase(_ purchase: AppPurchase, userID: String, at date: Date) async throws -> Bool

    /// The user's app purchases, earliest original purchase first.
    func appPurchases(userID: String) async throws -> [AppPurchase]
}

/// How many Apple IDs' app purchases one user may have kept: what a client can grow is bounded.
public enum AppPurchaseLimit {
    public static let perUser = 20
}
