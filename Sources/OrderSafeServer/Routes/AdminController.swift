import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

/// Admin reads behind the admin key: `GET /v1/admin/orders/{order_no}` with the order's event history.
struct AdminController {
    let ledger: any LedgerStore

    struct OrderDetail: Encodable {
        struct Event: Encodable {
            var kind: String
            var from_status: String?
            var to_status: String?
            var cause: String
            var evidence: String?
            var created_at: Date
        }
        var order: Order
        var events: [Event]
    }

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("orders/:order_no") { _, context in
            let orderNo = try context.parameters.require("order_no")
            guard let order = try await ledger.order(number: orderNo) else {
                throw APIError(status: .notFound, code: "order_not_found", message: "no order '\(orderNo)'")
            }
            let events = try await ledger.events(orderNo: orderNo).map {
                OrderDetail.Event(
                    kind: $0.kind, from_status: $0.fromStatus?.rawValue, to_status: $0.toStatus?.rawValue,
                    cause: $0.cause.rawValue, evidence: $0.evidence, created_at: $0.createdAt)
            }
            return try Response.json(OrderDetail(order: order, events: events))
        }
    }
}
