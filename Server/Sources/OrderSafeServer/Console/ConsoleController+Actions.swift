import Engine
import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

extension ConsoleController {
    struct RefundForm: Decodable {
        var reason: String?
    }

    struct ResolveForm: Decodable {
        var note: String
    }

    struct RedeliverForm: Decodable {
        var back: String?
    }

    func addActionRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        admin.post("orders/:order_no/refund") { request, context in
            try await signedIn(request, context) { page in
                try await refund(page, orderNo: try context.parameters.require("order_no"))
            }
        }
        admin.post("orders/:order_no/resolve") { request, context in
            try await signedIn(request, context) { page in
                try await resolve(page, orderNo: try context.parameters.require("order_no"))
            }
        }
        admin.post("orders/:order_no/query") { request, context in
            try await signedIn(request, context) { page in
                try await query(page, orderNo: try context.parameters.require("order_no"))
            }
        }
        for channel in desk.heldChannels {
            admin.post(RouterPath("\(channel.rawValue)/held/replay")) { request, context in
                try await signedIn(request, context) { page in try await replayHeld(page, channel) }
            }
        }
        admin.post("inbox/:id/replay") { request, context in
            try await signedIn(request, context) { page in
                try await replay(page, id: try context.parameters.require("id"))
            }
        }
        admin.post("webhooks/:event_id/redeliver") { request, context in
            try await signedIn(request, context) { page in
                try await redeliver(page, eventID: try context.parameters.require("event_id"))
            }
        }
    }

    private static func orderPath(_ orderNo: String, done: String) -> String {
        "/admin/orders/\(pathSegment(orderNo))?done=\(done)"
    }

    private func refund(_ page: PageRequest, orderNo: String) async throws -> Response {
        let fields = try await form(RefundForm.self, page)
        let reason = fields.reason.map { String($0.trimmingCharacters(in: .whitespacesAndNewlines).prefix(80)) }.flatMap
        { $0.isEmpty ? nil : $0 }
        let (_, outcome) = try await desk.refund(
            orderNo: orderNo, reason: reason, operatorName: page.session.operatorName)
        page.context.logger.notice(
            "console refund",
            metadata: ["order_no": "\(orderNo)", "operator": "\(page.session.operatorName)", "outcome": "\(outcome)"])
        let done =
            outcome == "refunded" ? "refund_done" : outcome == "already_refunded" ? "refund_already" : "refund_flagged"
        return ConsoleViews.redirect(Self.orderPath(orderNo, done: done))
    }

    private func resolve(_ page: PageRequest, orderNo: String) async throws -> Response {
        let fields = try await form(ResolveForm.self, page)
        try await desk.resolve(orderNo: orderNo, note: fields.note, operatorName: page.session.operatorName)
        return ConsoleViews.redirect(Self.orderPath(orderNo, done: "resolved"))
    }

    private func query(_ page: PageRequest, orderNo: String) async throws -> Response {
        _ = try await form(CSRFField.self, page)
        try await desk.query(orderNo: orderNo, operatorName: page.session.operatorName)
        return ConsoleViews.redirect(Self.orderPath(orderNo, done: "queried"))
    }

    private func replay(_ page: PageRequest, id text: String) async throws -> Response {
        _ = try await form(CSRFField.self, page)
        try await desk.replay(id: text, operatorName: page.session.operatorName)
        return ConsoleViews.redirect("/admin/operations?done=replayed#inbox")
    }

    private func replayHeld(_ page: PageRequest, _ channel: Channel) async throws -> Response {
        _ = try await form(CSRFField.self, page)
        _ = try await desk.replayHeld(channel, operatorName: page.session.operatorName)
        return ConsoleViews.redirect("/admin/operations?done=held_replayed#held")
    }

    private func redeliver(_ page: PageRequest, eventID: String) async throws -> Response {
        let fields = try await form(RedeliverForm.self, page)
        try await desk.redeliver(eventID: eventID, operatorName: page.session.operatorName)
        let back = Self.localPath(fields.back?.removingPercentEncoding) ?? "/admin/operations"
        let path = back.split(separator: "?", maxSplits: 1).first.map(String.init) ?? back
        return ConsoleViews.redirect(path + "?done=redelivered")
    }
}
