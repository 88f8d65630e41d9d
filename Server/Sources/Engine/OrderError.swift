import OrderSafeModel

/// Why an order request was refused; each maps to one API error code.
public enum OrderError: Error, Equatable, CustomStringConvertible {
    case unknownProduct(String)
    case channelNotAllowed(productID: String, channel: Channel, allowed: [Channel])
    /// The catalog allows the channel, but this server has no account for it.
    case channelUnavailable(Channel)
    case idempotencyConflict(key: String)
    case orderNotFound(String)
    /// The order is paid (or otherwise final) and cannot be cancelled.
    case notCancellable(orderNo: String, status: OrderStatus)
    /// The provider could not be reached for something that needs it now.
    case providerUnavailable(String)
    /// The user holds `limit` unpaid orders from the last day: pay or cancel one first.
    case tooManyUnpaidOrders(limit: Int)

    /// The stable code in the API's error body.
    public var code: String {
        switch self {
        case .unknownProduct: "unknown_product"
        case .channelNotAllowed: "channel_not_allowed"
        case .channelUnavailable: "channel_unavailable"
        case .idempotencyConflict: "idempotency_conflict"
        case .orderNotFound: "order_not_found"
        case .notCancellable: "order_not_cancellable"
        case .providerUnavailable: "provider_unavailable"
        case .tooManyUnpaidOrders: "too_many_unpaid_orders"
        }
    }

    public var description: String {
        switch self {
        case .unknownProduct(let id):
            "no product '\(id)' in the catalog"
        case .channelNotAllowed(let id, let channel, let allowed):
            "product '\(id)' cannot be bought through \(channel.rawValue); allowed: "
                + allowed.map(\.rawValue).joined(separator: ", ")
        case .channelUnavailable(let channel):
            "\(channel.rawValue) is not configured on this server"
        case .idempotencyConflict(let key):
            "Idempotency-Key '\(key)' was already used with a different request"
        case .orderNotFound(let orderNo):
            "no order '\(orderNo)' for this user"
        case .notCancellable(let orderNo, let status):
            "order '\(orderNo)' is \(status.rawValue) and cannot be cancelled"
        case .providerUnavailable(let detail):
            "the payment provider could not be reached; retry: \(detail)"
        case .tooManyUnpaidOrders(let limit):
            "this user holds \(limit) unpaid orders from the last 24 hours; pay or cancel one before making another"
        }
    }
}
