/// Body answered by `POST /v1/orders` and `GET /v1/orders/{order_no}`.
public struct OrderResponse: Codable, Hashable, Sendable {
    public var order: Order

    public init(order: Order) {
        self.order = order
    }
}
