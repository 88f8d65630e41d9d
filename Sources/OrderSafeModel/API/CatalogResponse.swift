/// Body of `GET /v1/catalog`: the products the app may offer.
public struct CatalogResponse: Codable, Hashable, Sendable {
    public var version: String
    public var products: [Product]

    public init(version: String, products: [Product]) {
        self.version = version
        self.products = products
    }
}
