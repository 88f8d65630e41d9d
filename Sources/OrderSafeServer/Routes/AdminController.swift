import Engine
import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

/// Behind the admin key or an operator key: `/v1/admin/…`, the same data and actions as the console, for scripts.
struct AdminController {
    let ledger: SQLLedger
    let refunds: RefundService
    let reconciler: Reconciler
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

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("orders") { request, _ in
            let zone = try Self.zone(request)
            let parsed: AdminOrderQuery
            do throws(AdminInputError) {
                parsed = try AdminOrderQuery(request.uri, zone: zone, allowed: ["tz"], emptyMeansAbsent: false)
            } catch {
                throw error.apiError
            }
            return try Response.json(AdminOrderList(try await ledger.orders(parsed.query)))
        }
        group.get("orders/:order_no") { _, context in
            let orderNo = try context.parameters.require("order_no")
            return try Response.json(AdminOrderDetail(try await dossier(orderNo)))
        }
        group.post("orders/:order_no/refund") { request, context in
            let orderNo = try context.parameters.require("order_no")
            var reason: String?
            if request.headers[.contentLength] != "0", request.headers[.contentType] != nil {
                reason = try await request.decodeJSON(RefundRequest.self, limit: 4096, context: context).reason.map { String($0.prefix(80)) }
            }
            do {
                let (order, outcome) = try await refunds.refund(orderNo: orderNo, reason: reason, operatorName: context.operatorName)
                let text: String =
                    switch outcome {
                    case .reversed: "refunded"
                    case .alreadyReversed: "already_refunded"
                    case .flagged(_, let reason): "flagged:\(reason.rawValue)"
                    case .unknownPayment, .cancelledByReinstatement: "already_refunded"
                    }
                try await ledger.logOperatorAction(
                    OperatorAction(operatorName: context.operatorName ?? "admin", action: "refund", target: orderNo, detail: text, at: clock.now()))
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
        group.post("orders/:order_no/resolve") { request, context in
            let orderNo = try context.parameters.require("order_no")
            let note = try await request.decodeJSON(ResolveRequest.self, limit: 4096, context: context).note
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard (1...1000).contains(note.count) else {
                throw APIError.badRequest("invalid_json", "'note' must say what was decided, in 1 to 1000 characters")
            }
            switch try await ledger.resolveFlag(orderNo: orderNo, operatorName: context.operatorName ?? "admin", note: note, at: clock.now()) {
            case .done: return try Response.json(AdminOrderDetail(try await dossier(orderNo)))
            case .notFound: throw APIError(status: .notFound, code: "order_not_found", message: "no order '\(orderNo.prefix(64))'")
            case .notApplicable(let reason): throw APIError(status: .conflict, code: "not_flagged", message: reason)
            }
        }
        group.post("orders/:order_no/query") { _, context in
            let orderNo = try context.parameters.require("order_no")
            guard let order = try await ledger.order(number: orderNo) else {
                throw APIError(status: .notFound, code: "order_not_found", message: "no order '\(orderNo.prefix(64))'")
            }
            guard order.channel != .appStore else {
                throw APIError(
                    status: .unprocessableContent, code: "not_queryable",
                    message: "App Store orders are settled by Apple's notifications and history, not by a query")
            }
            let settled: Order?
            do {
                settled = try await reconciler.settle(orderNo: orderNo)
            } catch {
                throw APIError(status: .badGateway, code: "provider_error", message: "the provider could not be asked: \(error)")
            }
            try await ledger.noteOperatorAction(
                orderNo: orderNo,
                OperatorAction(
                    operatorName: context.operatorName ?? "admin", action: "query_provider", target: orderNo,
                    detail: "status \((settled ?? order).status.rawValue)", at: clock.now()))
            return try Response.json(AdminOrderDetail(try await dossier(orderNo)))
        }
        group.get("users/:user_id") { request, context in
            let userID = try context.parameters.require("user_id")
            guard (1...128).contains(userID.utf8.count) else { throw APIError.badRequest("invalid_parameter", "'user_id' must be 1 to 128 bytes") }
            let parsed: AdminOrderQuery
            do throws(AdminInputError) {
                parsed = try AdminOrderQuery(request.uri, zone: .gmt, emptyMeansAbsent: false)
                guard parsed.parameters.allSatisfy({ $0.name == "limit" }) else {
                    throw AdminInputError(field: parsed.parameters.first { $0.name != "limit" }?.name ?? "", message: "is not a parameter here; use cursor, limit")
                }
            } catch {
                throw error.apiError
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
            return try Response.json(AdminStats(try await ledger.overview(now: clock.now(), days: 30, zone: zone), zone: zone))
        }
        group.get("operations") { _, _ in
            try Response.json(
                AdminOperations(
                    jobs: try await ledger.queuedJobs(limit: 100), inbox: try await ledger.inboxProblems(limit: 100),
                    attempts: try await ledger.webhookAttempts(limit: 100), actions: try await ledger.operatorActions(limit: 100)))
        }
        group.post("inbox/:id/replay") { _, context in
            let text = try context.parameters.require("id")
            guard text.utf8.count <= 19, let id = Int64(text), id > 0, let signal = try await ledger.unfinishedNotification(id: id) else {
                throw APIError(status: .notFound, code: "not_found", message: "no unfinished stored notification '\(text.prefix(32))'")
            }
            guard try await reconciler.replay(signal) else {
                throw APIError(
                    status: .conflict, code: "not_replayable",
                    message: "WeChat Pay notifications expire and cannot be replayed; query the order instead")
            }
            try await ledger.logOperatorAction(
                OperatorAction(operatorName: context.operatorName ?? "admin", action: "replay_notification", target: text, at: clock.now()))
            return try Response.json(["replayed": true])
        }
        group.post("webhooks/:event_id/redeliver") { _, context in
            let eventID = try context.parameters.require("event_id")
            switch try await ledger.redeliverWebhook(eventID: eventID, operatorName: context.operatorName ?? "admin", at: clock.now()) {
            case .done: return try Response.json(["scheduled": true], status: .accepted)
            case .notFound, .notApplicable:
                throw APIError(status: .notFound, code: "not_found", message: "no webhook event '\(eventID.prefix(64))'")
            }
        }
    }

    private func dossier(_ orderNo: String) async throws -> OrderDossier {
        guard orderNo.utf8.count <= 64, let dossier = try await ledger.dossier(orderNo: orderNo) else {
            throw APIError(status: .notFound, code: "order_not_found", message: "no order '\(orderNo.prefix(64))'")
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
