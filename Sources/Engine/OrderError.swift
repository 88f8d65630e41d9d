import OrderSafeModel

/// Why an order request was refused; each maps to one API error code.
public enum OrderError: Error, Equatable, CustomStringConvertible {
    case unknownProduct(String)
    case channelNotAllowed(productID: String, channel: Channel, allowed: [Channel])
    /// The catalog allows the channel, but this server has no account for it.
    case channelUnavailable(Channel)
    case idempotencyConflict(key: String)
    case orderNotFound(String)

    /// The stable code in the API's error body.
    public var code: String {
        switch self {
        case .unknownProduct: "unknown_product"
        case .channelNotAllowed: "channel_not_allowed"
        case .channelUnavailable: "channel_unavailable"
        case .idempotencyConflict: "idempotency_conflict"
        case .orderNotFound: "order_not_found"
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
        }
    }
}
