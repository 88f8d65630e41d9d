import Foundation
import OrderSafeModel

/// The webhook event of a subscription's change: `{"created_at","data":{"cause","evidence","order","subscription"},
/// "id","type":"subscription.updated"}`, the order being the one of the subscription's latest period; keys sorted
/// and dates as `OrderSafeJSON.encoder()` writes them, as every event is.
struct SubscriptionWebhook: Encodable {
    struct Payload: Encodable {
        var cause: String
        var evidence: String
        var order: Order
        var subscription: UserSubscription
    }

    static let type = WebhookEventType.subscriptionUpdated.rawValue

    var id: String
    var type = Self.type
    var createdAt: Date
    var data: Payload

    init(id: String, createdAt: Date, data: Payload) {
        self.id = id
        self.createdAt = createdAt
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case id, type, data
        case createdAt = "created_at"
    }

    func json() throws -> String {
        String(decoding: try OrderSafeJSON.encoder().encode(self), as: UTF8.self)
    }
}
