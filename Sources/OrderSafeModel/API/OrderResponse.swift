/// Body answered by `POST /v1/orders` and `GET /v1/orders/{order_no}`.
public struct OrderResponse: Codable, Hashable, Sendable {
    public var order: Order
    /// For Alipay orders when created: what the app hands to the Alipay SDK.
    public var alipay: AlipayInvocation?

    public init(order: Order, alipay: AlipayInvocation? = nil) {
        self.order = order
        self.alipay = alipay
    }
}

/// The signed `alipay.trade.app.pay` order string for the Alipay SDK's `payOrder`.
public struct AlipayInvocation: Codable, Hashable, Sendable {
    public var orderString: String

    public init(orderString: String) {
        self.orderString = orderString
    }

    enum CodingKeys: String, CodingKey {
        case orderString = "order_string"
    }
}
