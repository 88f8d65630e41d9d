/// Body of `POST /v1/orders`.
public struct CreateOrderRequest: Codable, Hashable, Sendable {
    public var productID: String
    public var channel: Channel

    public init(productID: String, channel: Channel) {
        self.productID = productID
        self.channel = channel
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case channel
    }
}
