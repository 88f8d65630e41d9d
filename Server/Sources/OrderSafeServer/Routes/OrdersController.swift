import Engine
import Hummingbird
import Ledger
import OrderSafeModel

/// `POST /v1/orders` and `GET /v1/orders/{order_no}` for the signed-in user.
struct OrdersController {
    let orders: OrderService
    let channels: RunningChannels
    let reconciler: Reconciler
    let maxBodyBytes: Int

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.post("orders", use: create)
        group.get("orders/:order_no", use: show)
        group.post("orders/:order_no/client-result", use: clientResult)
        group.post("orders/:order_no/cancel", use: cancel)
    }

    /// The app reports what the provider's SDK told it. Only a hint: it is recorded, and the provider is asked at
    /// once; the answer is the order as the provider's word leaves it, and `provider_answer` `not_paid` when the
    /// provider, asked now, said the order is not paid. An order the ledger lost is rebuilt from the provider of the
    /// hint's `channel` when its record names the user.
    func clientResult(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let orderNo = try context.parameters.require("order_no")
        let hint = try await request.decodeJSON(ClientResultRequest.self, limit: 4096)
        let order = try await orders.order(
            number: orderNo, userID: user.id, rebuildingThrough: hint.channel.flatMap { channels[$0]?.settler })
        let (settled, answer) = try await orders.recordClientResult(hint, for: order, reconciler: reconciler)
        return try Response.json(OrderResponse(order: settled, providerAnswer: answer))
    }

    /// The user gives up an unpaid order; a paid one cannot be cancelled (409).
    func cancel(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let orderNo = try context.parameters.require("order_no")
        return try Response.json(
            OrderResponse(order: try await orders.cancel(number: orderNo, userID: user.id, settler: reconciler)))
    }

    func create(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let key = try Self.idempotencyKey(request, reserved: channels.registry)
        let body = try await request.decodeJSON(CreateOrderRequest.self, limit: maxBodyBytes)
        let creation = try await orders.createOrder(body, userID: user.id, idempotencyKey: key)
        var response = OrderResponse(order: creation.order)
        try await channels[body.channel]?.invoke(creation.order, into: &response)
        if case .created(let order) = creation {
            context.logger.info("order created", metadata: ["order_no": "\(order.orderNo)"])
            return try Response.json(response, status: .created)
        }
        return try Response.json(response, status: .ok)
    }

    func show(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let orderNo = try context.parameters.require("order_no")
        let order = try await orders.order(number: orderNo, userID: user.id)
        return try Response.json(
            OrderResponse(order: order, providerTransactionID: try await orders.paymentID(ofOrder: order.orderNo)))
    }

    /// The `Idempotency-Key` header, if present: 1 to 255 printable ASCII characters, not in a namespace a channel
    /// keys the orders it makes itself with (``PaymentChannel/reservedIdempotencyPrefix``).
    static func idempotencyKey(_ request: Request, reserved registry: ChannelRegistry) throws -> String? {
        guard let key = request.headers.value(of: .idempotencyKey) else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError.badRequest(
                "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
        }
        if let reserved = registry.all.compactMap({ $0.reservedIdempotencyPrefix }).first(where: {
            key.lowercased().hasPrefix($0)
        }) {
            throw APIError.badRequest(
                "invalid_idempotency_key", "Idempotency-Key may not start with '\(reserved)' (reserved)")
        }
        return key
    }
}

extension OrderError: APIErrorConvertible {
    var apiError: APIError {
        let status: HTTPResponse.Status =
            switch self {
            case .unknownProduct, .orderNotFound: .notFound
            case .channelNotAllowed, .channelUnavailable: .unprocessableContent
            case .idempotencyConflict, .notCancellable, .tooManyUnpaidOrders: .conflict
            case .providerUnavailable: .serviceUnavailable
            }
        return APIError(status: status, code: code, message: description)
    }
}
