/// Body answered by `GET /v1/me/orders`: a page of the signed-in user's orders, newest first.
public struct OrderHistoryResponse: Codable, Hashable, Sendable {
    public var orders: [Order]
    /// Where the next (older) page starts, for `?cursor=`; absent on the last page.
    public var next: String?

    public init(orders: [Order], next: String? = nil) {
        self.orders = orders
        self.next = next
    }
}
