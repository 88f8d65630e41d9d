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
            try await signedIn(request, context) { page in try await refund(page, orderNo: try context.parameters.require("order_no")) }
        }
        admin.post("orders/:order_no/resolve") { request, context in
            try await signedIn(request, context) { page in try await resolve(page, orderNo: try context.parameters.require("order_no")) }
        }
        admin.post("orders/:order_no/query") { request, context in
            try await signedIn(request, context) { page in try await query(page, orderNo: try context.parameters.require("order_no")) }
        }
        admin.post("inbox/:id/replay") { request, context in
            try await signedIn(request, context) { page in try await replay(page, id: try context.parameters.require("id")) }
        }
        admin.post("webhooks/:event_id/redeliver") { request, context in
            try await signedIn(request, context) { page in try await redeliver(page, eventID: try context.parameters.require("event_id")) }
        }
    }

    private static func orderPath(_ orderNo: String, done: String) -> String { "/admin/orders/\(pathSegment(orderNo))?done=\(done)" }

    private func refund(_ page: PageRequest, orderNo: String) async throws -> Response {
        let fields = try await form(RefundForm.self, page)
        let reason = fields.reason.map { String($0.trimmingCharacters(in: .whitespacesAndNewlines).prefix(80)) }.flatMap { $0.isEmpty ? nil : $0 }
        let operatorName = page.session.operatorName
        do {
            let (_, outcome) = try await refunds.refund(orderNo: orderNo, reason: reason, operatorName: operatorName)
            let done: String =
                switch outcome {
                case .reversed: "refund_done"
                case .flagged: "refund_flagged"
                case .alreadyReversed, .unknownPayment, .cancelledByReinstatement: "refund_already"
                }
            try await ledger.logOperatorAction(
                OperatorAction(operatorName: operatorName, action: "refund", target: orderNo, detail: "\(outcome)", at: clock.now()))
            page.context.logger.notice("console refund", metadata: ["order_no": "\(orderNo)", "operator": "\(operatorName)", "outcome": "\(outcome)"])
            return ConsoleViews.redirect(Self.orderPath(orderNo, done: done))
        } catch let error as RefundError {
            switch error {
            case .orderNotFound: throw ConsolePageError.notFound
            case .notRefundable: throw ConsolePageError.refused(.unprocessableContent, error.description)
            case .notPaid: throw ConsolePageError.refused(.conflict, error.description)
            case .provider: throw ConsolePageError.refused(.badGateway, error.description)
            }
        }
    }

    private func resolve(_ page: PageRequest, orderNo: String) async throws -> Response {
        let fields = try await form(ResolveForm.self, page)
        let note = fields.note.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...1000).contains(note.count) else { throw ConsolePageError.invalid("'note' must say what was decided, in 1 to 1000 characters") }
        switch try await ledger.resolveFlag(orderNo: orderNo, operatorName: page.session.operatorName, note: note, at: clock.now()) {
        case .done: return ConsoleViews.redirect(Self.orderPath(orderNo, done: "resolved"))
        case .notFound: throw ConsolePageError.notFound
        case .notApplicable(let reason): throw ConsolePageError.refused(.conflict, reason)
        }
    }

    private func query(_ page: PageRequest, orderNo: String) async throws -> Response {
        _ = try await form(CSRFField.self, page)
        guard let order = try await ledger.order(number: orderNo) else { throw ConsolePageError.notFound }
        guard order.channel != .appStore else {
            throw ConsolePageError.refused(.unprocessableContent, "App Store orders are settled by Apple's notifications and history, not by a query")
        }
        let settled: Order?
        do {
            settled = try await reconciler.settle(orderNo: orderNo)
        } catch {
            throw ConsolePageError.refused(.badGateway, "the provider could not be asked: \(error)")
        }
        try await ledger.noteOperatorAction(
            orderNo: orderNo,
            OperatorAction(
                operatorName: page.session.operatorName, action: "query_provider", target: orderNo,
                detail: "status \((settled ?? order).status.rawValue)", at: clock.now()))
        return ConsoleViews.redirect(Self.orderPath(orderNo, done: "queried"))
    }

    private func replay(_ page: PageRequest, id text: String) async throws -> Response {
        _ = try await form(CSRFField.self, page)
        guard text.utf8.count <= 19, let id = Int64(text), id > 0, let signal = try await ledger.unfinishedNotification(id: id) else {
            throw ConsolePageError.notFound
        }
        guard try await reconciler.replay(signal) else { throw ConsolePageError.refused(.conflict, page.texts["replay_unsupported"] ?? "") }
        try await ledger.logOperatorAction(
            OperatorAction(operatorName: page.session.operatorName, action: "replay_notification", target: String(id), at: clock.now()))
        return ConsoleViews.redirect("/admin/operations?done=replayed#inbox")
    }

    private func redeliver(_ page: PageRequest, eventID: String) async throws -> Response {
        let fields = try await form(RedeliverForm.self, page)
        guard eventID.utf8.count <= 64 else { throw ConsolePageError.notFound }
        switch try await ledger.redeliverWebhook(eventID: eventID, operatorName: page.session.operatorName, at: clock.now()) {
        case .done:
            let back = Self.localPath(fields.back?.removingPercentEncoding) ?? "/admin/operations"
            let path = back.split(separator: "?", maxSplits: 1).first.map(String.init) ?? back
            return ConsoleViews.redirect(path + "?done=redelivered")
        case .notFound: throw ConsolePageError.notFound
        case .notApplicable(let reason): throw ConsolePageError.refused(.conflict, reason)
        }
    }
}
