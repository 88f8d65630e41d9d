import Foundation
import OrderSafeModel

extension OrderSafe {
    /// A purchase the user started on the App Store (`PurchaseIntent`): the catalog product it is, announced for the
    /// app to buy when it is ready. Nothing was charged, so an intent that cannot be matched (the catalog does not
    /// sell the product through the App Store, or cannot be loaded) is logged and left: the user taps it again.
    func promoted(_ intent: StorePurchaseIntent) async {
        let appStoreProductID = intent.productID
        var product = await promotedProduct(appStoreProductID, fresh: false)
        if product == nil { product = await promotedProduct(appStoreProductID, fresh: true) }
        guard let product else {
            log(
                .warning, "a promoted purchase of a product the catalog does not sell through the App Store",
                ["app_store_product_id": String(appStoreProductID.prefix(100))])
            return
        }
        hub.send(.promotedPurchase(productID: product.id, offerID: intent.offerID.map { String($0.prefix(64)) }))
    }

    /// Buys the promoted purchase of `productID` (a catalog id) waiting in ``OrderSafeSnapshot/promotedPurchases``, as
    /// the user tapped it on the App Store: with its offer (signed by the server for this order, so a win-back offer
    /// is not bought at full price), else as ``purchase(_:through:confirmIn:)`` through the App Store.
    public func purchasePromoted(_ productID: String, confirmIn scene: ConfirmationScene? = nil) async
        -> PurchaseOutcome
    {
        if let offerID = snapshot().promotedOffers[productID] {
            return await purchase(productID, offer: offerID, confirmIn: scene)
        }
        return await purchase(productID, through: .appStore, confirmIn: scene)
    }

    private func promotedProduct(_ appStoreProductID: String, fresh: Bool) async -> CatalogProduct? {
        guard let catalog = try? await loadCatalog(fresh: fresh) else { return nil }
        return catalog.products.first { $0.appStoreProductID == appStoreProductID && $0.channels.contains(.appStore) }
    }
}
