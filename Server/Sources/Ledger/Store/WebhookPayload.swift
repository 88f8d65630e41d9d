import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

/// The JSON a merchant's backend receives for one webhook event:
/// `{"created_at","data":{"cause","evidence","order"},"id","type"}` (`evidence` only when there is one), keys sorted,
/// dates in ISO 8601 to the second, as `OrderSafeJSON.encoder()` writes it.
///
/// Written directly rather than through `JSONEncoder`: encoding three payloads of a whole order per submission was
/// 14% of the ledger writer's time in the profile. `WebhookPayloadTests` holds the bytes equal to `JSONEncoder`'s.
package enum WebhookPayload {
    package static func json(id: String, type: String, createdAt: Date, order: Order, cause: String, evidence: String?)
        -> String
    {
        var json = JSONText()
        json.append(#"{"created_at":"#)
        json.append(date: createdAt)
        json.append(#","data":{"cause":"#)
        json.append(string: cause)
        if let evidence {
            json.append(#","evidence":"#)
            json.append(string: evidence)
        }
        json.append(#","order":"#)
        json.append(order: order)
        json.append(#"},"id":"#)
        json.append(string: id)
        json.append(#","type":"#)
        json.append(string: type)
        json.append("}")
        return json.string
    }
}
