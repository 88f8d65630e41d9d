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

    /// Subscription group `groupID` as StoreKit on this device knows it (`Product.SubscriptionInfo.status(for:)`):
    /// the phone's Apple ID's subscriptions, to show beside the server's word for the user (``subscriptions(allowCached:)``)
    /// — a subscription bought with another Apple ID is the server's only, and one of this Apple ID may be another
    /// user's. Access follows the server's.
    public func subscriptionStatusOnDevice(groupID: String) async throws(OrderSafeError) -> [StoreSubscriptionStatus] {
        do {
            return try await store.subscriptionStatuses(groupID: groupID)
        } catch {
            throw .store((error as? StoreFailure) ?? .other("\(error)"))
        }
    }
}
