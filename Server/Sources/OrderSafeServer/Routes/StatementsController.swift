import Engine
import Foundation
import Hummingbird
import OrderSafeModel

/// `/v1/admin/statements`: each day's check of the providers' statements against the ledger (what matched, what
/// the statement recovered, each difference with its evidence), and a day checked again on request.
struct StatementsController {
    let desk: OperatorDesk

    /// `GET /v1/admin/statements`: the newest days first.
    struct StatementList: Encodable {
        var statements: [StatementReport]
    }

    func addRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        admin.get("statements") { request, _ in
            var limit = 62
            for (name, value) in request.uri.queryParameters.map({ (String($0.key), String($0.value)) }) {
                guard name == "limit" else {
                    throw APIError.badRequest(
                        "invalid_parameter", "'\(name.prefix(32))' is not a parameter here; use limit")
                }
                guard value.utf8.count <= 4, let number = Int(value), (1...1000).contains(number) else {
                    throw APIError.badRequest("invalid_parameter", "'limit' must be 1 to 1000")
                }
                limit = number
            }
            return try Response.json(StatementList(statements: try await desk.statements.reports(limit: limit)))
        }
        admin.get("statements/:channel/:day") { _, context in
            let (channel, day) = try Self.channelAndDay(context)
            guard let report = try await desk.statements.report(channel, day: day) else {
                throw APIError(
                    status: .notFound, code: "statement_not_found",
                    message: "the \(channel.rawValue) statement of \(day) has not been checked")
            }
            return try Response.json(report)
        }
        admin.post("statements/:channel/:day/run") { _, context in
            let (channel, day) = try Self.channelAndDay(context)
            return try Response.json(try await desk.reconcile(channel, day: day, operatorName: context.operator))
        }
    }

    /// The path's channel (one whose provider publishes statements here) and day (`yyyy-MM-dd`).
    static func channelAndDay(_ context: OrderSafeRequestContext) throws -> (Channel, StatementDay) {
        guard let channel = context.parameters.get("channel").flatMap(Channel.init(rawValue:)) else {
            throw APIError.badRequest(
                "invalid_parameter",
                "'channel' must be a channel name (\(Channel.builtIn.map(\.rawValue).joined(separator: ", ")))")
        }
        guard let day = context.parameters.get("day").flatMap(StatementDay.init) else {
            throw APIError.badRequest("invalid_parameter", "'day' must be a day as YYYY-MM-DD")
        }
        return (channel, day)
    }
}
