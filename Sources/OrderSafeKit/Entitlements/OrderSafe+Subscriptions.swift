import Foundation
import OrderSafeModel

extension OrderSafe {
    /// The signed-in user's auto-renewable subscriptions, one per subscription group, with the server's state for
    /// each (`SubscriptionState`: active and in the grace period give access; in billing retry, ask the user to fix
    /// their payment method): from the server, or when it cannot be reached and `allowCached`, the last ones it gave
    /// that user. Signed out: nothing. Also sent as ``OrderSafeEvent/subscriptionsChanged(_:)`` when they changed.
    public func subscriptions(allowCached: Bool = true) async throws(OrderSafeError) -> SubscriptionsResponse {
        try await signedInUsers(
            allowCached: allowCached, cache: subscriptionCache, changed: { .subscriptionsChanged($0) }
        ) { try await $0.subscriptions() }
    }
}
