import Foundation
import Ledger
import OrderSafeModel

/// The subscriptions a user holds, as `GET /v1/me/subscriptions` and the console show them.
public struct Subscriptions: Sendable {
    let book: any SubscriptionBook
    let clock: any WallClock

    public init(book: any SubscriptionBook, clock: any WallClock) {
        self.book = book
        self.clock = clock
    }

    public func of(userID: String) async throws -> SubscriptionsResponse {
        let signals = try await book.subscriptionSignals(userID: userID)
        return SubscriptionsResponse(userID: userID, subscriptions: SubscriptionFold.statuses(signals, at: clock.now()))
    }
}
