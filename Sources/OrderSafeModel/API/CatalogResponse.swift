/// Body of `GET /v1/catalog`: the products the app may offer.
public struct CatalogResponse: Codable, Hashable, Sendable {
    public var version: String
    public var products: [CatalogProduct]

    public init(version: String, products: [CatalogProduct]) {
        self.version = version
        self.products = products
    }
}
