import Foundation

/// An order: one user's intent to buy one product through one channel.
public struct Order: Codable, Hashable, Sendable {
    /// Human-readable unique number, e.g. `OS20261122-K7QZ3M9X`; the provider's `out_trade_no`.
    public var orderNo: String
    /// Unique id handed to StoreKit as `appAccountToken`.
    public var orderUUID: UUID
    public var userID: String
    public var productID: String
    public var channel: Channel
    public var status: OrderStatus
    /// The amount the provider must report, fixed when the order is created.
    public var amount: Money
    public var createdAt: Date
    public var updatedAt: Date
    /// Paid in a provider's test environment (an App Store Sandbox purchase, e.g. App Review's): fulfilled, but no revenue.
    public var sandbox: Bool

    public init(
        orderNo: String, orderUUID: UUID, userID: String, productID: String, channel: Channel, status: OrderStatus,
        amount: Money, createdAt: Date, updatedAt: Date, sandbox: Bool = false
    ) {
        self.sandbox = sandbox
        self.orderNo = orderNo
        self.orderUUID = orderUUID
        self.userID = userID
        self.productID = productID
        self.channel = channel
        self.status = status
        self.amount = amount
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case orderNo = "order_no"
        case orderUUID = "order_uuid"
        case userID = "user_id"
        case productID = "product_id"
        case channel, status, amount, sandbox
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
