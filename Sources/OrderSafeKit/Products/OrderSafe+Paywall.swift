import Foundation
import OrderSafeModel

extension OrderSafe {
    /// What the paywall shows: ``products()`` with the storefront, and for the signed-in user the introductory offer
    /// the server says they may have (across every Apple ID they bought with) and the promotional and win-back offers
    /// it lists for them. Signed out, or when the server cannot answer for the user, the products come without
    /// either: nothing is promised that the purchase might not give.
    public func paywall() async throws(OrderSafeError) -> Paywall {
        let list = try await products()
        var answer: CatalogResponse?
        if userID != nil { answer = try? await api.catalogForUser() }
        return Paywall(list: list, storefront: await store.storefront(), userID: userID, answer: answer)
    }

    /// Each App Store storefront the device's account moves to from now on (`Storefront.updates`), for as long as
    /// it is iterated: prices, currency and offers change with it, so load ``paywall()`` or ``products()`` again.
    public nonisolated func storefrontChanges() -> AsyncStream<StoreStorefront> {
        store.storefrontUpdates()
    }
}
