import Foundation
import OrderSafeModel

/// The products on sale: the server's catalog merged with the App Store's details, cheapest first.
public struct ProductList: Sendable, Hashable {
    public var offers: [ProductOffer]
    /// App Store product ids in the catalog that StoreKit does not know (not approved yet, another storefront,
    /// a typo in App Store Connect): their products can still be bought through Alipay or WeChat Pay if offered.
    public var unknownToStore: [String]
    /// False when this device may not pay through the App Store (Screen Time restrictions).
    public var canMakePayments: Bool

    init(catalog: [CatalogProduct], store: [StoreProduct], canMakePayments: Bool) {
        let storeByID = Dictionary(store.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var unknown: [String] = []
        offers = catalog.map { product in
            let details = product.appStoreProductID.flatMap { storeByID[$0] }
            if let id = product.appStoreProductID, details == nil { unknown.append(id) }
            var channels = product.channels
            if product.appStoreProductID != nil, details == nil { channels.removeAll { $0 == .appStore } }
            return ProductOffer(
                id: product.id, title: details?.displayName ?? product.title, kind: product.kind,
                channels: channels,
                prices: product.prices, store: details)
        }
        .sorted { ($0.sortKey, $0.id) < ($1.sortKey, $1.id) }
        unknownToStore = unknown.sorted()
        self.canMakePayments = canMakePayments
    }
}

/// One product as the UI shows it.
public struct ProductOffer: Sendable, Hashable, Identifiable {
    /// The catalog id (what ``OrderSafe/purchase(_:through:confirmIn:)`` takes).
    public var id: String
    public var title: String
    public var kind: ProductKind
    /// The channels it can be bought through on this device.
    public var channels: [Channel]
    /// The catalog's prices per channel (integer minor units).
    public var prices: [Channel: Money]
    /// The App Store's details (its price in the storefront's currency, formatted), when StoreKit knows it.
    public var store: StoreProduct?

    /// Cheapest first: the smallest catalog price in minor units (prices of one catalog share a currency in practice).
    var sortKey: Int64 {
        prices.values.map(\.amountMinor).min() ?? Int64.max
    }
}
