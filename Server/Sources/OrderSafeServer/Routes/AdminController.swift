import Engine
import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

/// Behind the admin key or an operator key: `/v1/admin/…`, the same data and actions as the console, for scripts.
struct AdminController {
    let ledger: any OperatorReads & HoldingsReader
    let desk: OperatorDesk
    let subscriptions: Subscriptions
    let clock: any WallClock

    struct RefundRequest: APIRequestBody {
        static let members: Set<String> = ["reason"]
        var reason: String?
    }

    struct ResolveRequest: APIRequestBody {
        static let members: Set<String> = ["note"]
        var note: String
    }

    struct RefundResponse: Encodable {
        var order: Order
        /// `refunded`, `already_refunded`, or `flagged:negative_balance` (the user had spent what was refunded).
        var outcome: String
    }

    /// The path's `user_id`, percent-decoded: 1 to 128 bytes.
    static func userID(_ context: OrderSafeRequestContext) throws -> String {
        guard let userID = context.decodedParameter("user_id"), (1...128).contains(userID.utf8.count) else {
            throw APIError.badRequest(
                "invalid_parameter", "'user_id' must be 1 to 128 bytes, percent-encoded in the path")
        }
        return userID
    }

    func addRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        let group = admin.group()
        group.get("orders") { request, _ in
            let zone = try Self.zone(request)
            let parsed = try AdminOrderQuery(
                request.uri, zone: zone, channels: desk.channels, allowed: ["tz"], emptyMeansAbsent: false)
            return try Response.json(AdminOrderList(try await ledger.orders(parsed.query)))
        }
        group.get("orders/:order_no") { request, context in
            let orderNo = try context.parameters.require("order_no")
            let from = try EventsPageQuery.eventsFrom(request.uri)
            return try Response.json(AdminOrderDetail(try await dossier(orderNo, eventsFrom: from)))
        }
        group.post("orders/:order_no/refund") { request, context in
            let orderNo = try context.parameters.require("order_no")
            var reason: String?
            if request.headers.value(of: .contentLength) != "0", request.headers.value(of: .contentType) != nil {
                reason = try await request.decodeJSON(RefundRequest.self, limit: 4096).reason.map {
                    String($0.prefix(80))
                }
            }
            let (order, outcome) = try await desk.refund(
                orderNo: orderNo, reason: reason, operatorName: context.operator)
            context.logger.notice("merchant refund", metadata: ["order_no": "\(orderNo)", "outcome": "\(outcome)"])
            return try Response.json(RefundResponse(order: order, outcome: outcome))
        }
        group.post("orders/:order_no/resolve") { request, context in
            let orderNo = try context.parameters.require("order_no")
            // 1,000 characters, each escaped as two \uXXXX units at worst: 12,000 bytes of valid body.
            let note = try await request.decodeJSON(ResolveRequest.self, limit: 16 * 1024).note
            try await desk.resolve(orderNo: orderNo, note: note, operatorName: context.operator)
            return try Response.json(AdminOrderDetail(try await dossier(orderNo)))
        }
        group.post("orders/:order_no/query") { request, context in
            try await request.expectNoBody()
            let orderNo = try context.parameters.require("order_no")
            try await desk.query(orderNo: orderNo, operatorName: context.operator)
            return try Response.json(AdminOrderDetail(try await dossier(orderNo)))
        }
        group.get("users/:user_id/subscriptions") { request, context in
            let userID = try Self.userID(context)
            for name in request.uri.queryParameters.map({ String($0.key) }) {
                throw APIError.badRequest("invalid_parameter", "'\(name.prefix(32))' is not a parameter here")
            }
            return try Response.json(try await subscriptions.of(userID: userID))
        }
        group.get("users/:user_id") { request, context in
            let userID = try Self.userID(context)
            let parsed = try AdminOrderQuery(
                request.uri, zone: .gmt, channels: desk.channels, emptyMeansAbsent: false)
            guard parsed.parameters.allSatisfy({ $0.name == "limit" }) else {
                throw AdminInputError(
                    field: parsed.parameters.first { $0.name != "limit" }?.name ?? "",
                    message: "is not a parameter here; use cursor, limit")
            }
            var query = parsed.query
            query.userID = userID
            let holdings = try await ledger.holdings(userID: userID, at: clock.now())
            return try Response.json(AdminUser(holdings: holdings, page: try await ledger.orders(query)))
        }
        group.get("stats") { request, _ in
            let zone = try Self.zone(request)
            for name in request.uri.queryParameters.map({ String($0.key) }) where name != "tz" {
                throw APIError.badRequest("invalid_parameter", "'\(name.prefix(32))' is not a parameter here; use tz")
            }
            return try Response.json(
                AdminStats(try await ledger.overview(now: clock.now(), days: 30, zone: zone), zone: zone))
        }
        group.get("operations") { _, _ in
            try Response.json(
                AdminOperations(
                    jobs: try await ledger.queuedJobs(limit: 100), inbox: try await ledger.inboxProblems(limit: 100),
                    attempts: try await ledger.webhookAttempts(limit: 100),
                    actions: try await ledger.operatorActions(limit: 100)))
        }
        for channel in desk.heldChannels {
            group.post(RouterPath("\(channel.rawValue)/held/replay")) { request, context in
                try await request.expectNoBody()
                return try Response.json(try await desk.replayHeld(channel, operatorName: context.operator))
            }
        }
        group.post("inbox/:id/replay") { request, context in
            try await request.expectNoBody()
            try await desk.replay(id: try context.parameters.require("id"), operatorName: context.operator)
            return try Response.json(["replayed": true])
        }
        group.post("webhooks/:event_id/redeliver") { request, context in
            try await request.expectNoBody()
            try await desk.redeliver(
                eventID: try context.parameters.require("event_id"), operatorName: context.operator)
            return try Response.json(["scheduled": true], status: .accepted)
        }
    }

    private func dossier(_ orderNo: String, eventsFrom: Int = 0) async throws -> OrderDossier {
        guard orderNo.utf8.count <= 64, let dossier = try await ledger.dossier(orderNo: orderNo, eventsFrom: eventsFrom)
        else {
            throw OperatorDesk.Refusal.noOrder(orderNo)
        }
        return dossier
    }

    /// The `tz` parameter (an IANA zone name), UTC when absent.
    static func zone(_ request: Request) throws -> TimeZone {
        guard let name = request.uri.queryParameters["tz"].map(String.init) else { return .gmt }
        guard let zone = ConsoleFormat.zone(named: name) else {
            throw APIError.badRequest("invalid_parameter", "'tz' must be a time zone name such as Asia/Shanghai")
        }
        return zone
    }
}

extension OperatorDesk.Refusal: APIErrorConvertible {
    var apiError: APIError { APIError(status: status, code: code, message: message) }
}

extension OrderSafeRequestContext {
    /// The operator behind an admin request; only reachable behind ``AdminAuthMiddleware``.
    var `operator`: String { operatorName ?? "admin" }
}
