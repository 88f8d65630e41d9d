import Foundation
import OrderSafeModel

/// What a user holds now: their balances and entitlements.
public protocol HoldingsReader: Sendable {
    /// The user's balances and entitlements.
    func holdings(userID: String, at: Date) async throws -> HoldingsResponse
}
