/// A promotional or win-back offer the signed-in user may have now, as `GET /v1/catalog` lists it when asked with the
/// user's token: its audience admits the user, the window after expiry and the limit per user allow it. The server
/// signs it on request (``AvailableOffer/asksMerchant`` offers only if the merchant's backend then says yes).
public struct AvailableOffer: Codable, Hashable, Sendable {
    /// The catalog product's id.
    public var productID: String
    /// The offer's id in App Store Connect (what `OrderSafe.purchase(_:offer:confirmIn:)` takes).
    public var offerID: String
    public var kind: SubscriptionOfferKind
    /// What its first period costs, as the catalog says App Store Connect has it (StoreKit's terms are the ones shown).
    public var price: Money?
    /// The merchant's backend decides when the offer is signed (`ask_merchant`): it may still be refused.
    public var asksMerchant: Bool

    public init(
        productID: String, offerID: String, kind: SubscriptionOfferKind, price: Money? = nil, asksMerchant: Bool = false
    ) {
        self.productID = productID
        self.offerID = offerID
        self.kind = kind
        self.price = price
        self.asksMerchant = asksMerchant
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case offerID = "offer_id"
        case kind, price
        case asksMerchant = "asks_merchant"
    }
}

/// Which of a subscription's offers the server signs: promotional (for the audiences its rule names) or win-back (for
/// a subscriber whose subscription expired). Apple's `offerType` 2 and 4.
public enum SubscriptionOfferKind: String, Codable, Hashable, Sendable, CaseIterable {
    case promotional
    case winBack = "win_back"
}
