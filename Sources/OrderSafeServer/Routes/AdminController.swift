import Engine
import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

/// Behind the admin key: `GET /v1/admin/orders/{order_no}` with the order's event history, and
/// `POST /v1/admin/orders/{order_no}/refund` (a merchant refund through Alipay or WeChat Pay).
struct AdminController {
    let ledger: any LedgerStore
    let refunds: RefundService

    struct RefundRequest: APIRequestBody {
        static let members: Set<String> = ["reason"]
        var reason: String?
    }

    struct RefundResponse: Encodable {
        var order: Order
        /// `refunded`, `already_refunded`, or `flagged:negative_balance` (the user had spent what was refunded).
        var outcome: String
    }

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
        group.post("orders/:order_no/refund") { request, context in
            let orderNo = try context.parameters.require("order_no")
            var reason: String?
            if request.headers[.contentLength] != "0", request.headers[.contentType] != nil {
                reason = try await request.decodeJSON(RefundRequest.self, limit: 4096, context: context).reason.map { String($0.prefix(80)) }
            }
            do {
                let (order, outcome) = try await refunds.refund(orderNo: orderNo, reason: reason)
                let text: String =
                    switch outcome {
                    case .reversed: "refunded"
                    case .alreadyReversed: "already_refunded"
                    case .flagged(_, let reason): "flagged:\(reason.rawValue)"
                    case .unknownPayment, .cancelledByReinstatement: "already_refunded"
                    }
                context.logger.notice("merchant refund", metadata: ["order_no": "\(orderNo)", "outcome": "\(text)"])
                return try Response.json(RefundResponse(order: order, outcome: text))
            } catch let error as RefundError {
                let status: HTTPResponse.Status =
                    switch error {
                    case .orderNotFound: .notFound
                    case .notRefundable: .unprocessableContent
                    case .notPaid: .conflict
                    case .provider: .badGateway
                    }
                throw APIError(status: status, code: error.code, message: error.description)
            }
        }
    }
}
