/// Body of `GET /v1/catalog`: the products the app may offer.
public struct CatalogResponse: Codable, Hashable, Sendable {
    public var version: String
    public var products: [CatalogProduct]
    /// Asked with a user's token: the user's eligibility for each auto-renewable product's introductory offer.
    public var introductoryOffers: [IntroductoryOfferEligibility]?

    public init(version: String, products: [CatalogProduct], introductoryOffers: [IntroductoryOfferEligibility]? = nil)
    {
        self.version = version
        self.products = products
        self.introductoryOffers = introductoryOffers
    }

    enum CodingKeys: String, CodingKey {
        case version, products
        case introductoryOffers = "introductory_offers"
    }
}
