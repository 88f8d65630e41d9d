/// Body of `GET /v1/catalog`: the products the app may offer.
public struct CatalogResponse: Codable, Hashable, Sendable {
    public var version: String
    public var products: [CatalogProduct]
    /// Asked with a user's token: the user's eligibility for each auto-renewable product's introductory offer.
    public var introductoryOffers: [IntroductoryOfferEligibility]?
    /// Asked with a user's token: the promotional and win-back offers the user may have now, by product.
    public var offers: [AvailableOffer]?

    public init(
        version: String, products: [CatalogProduct], introductoryOffers: [IntroductoryOfferEligibility]? = nil,
        offers: [AvailableOffer]? = nil
    ) {
        self.version = version
        self.products = products
        self.introductoryOffers = introductoryOffers
        self.offers = offers
    }

    enum CodingKeys: String, CodingKey {
        case version, products, offers
        case introductoryOffers = "introductory_offers"
    }
}
