import Engine
import Hummingbird
import OrderSafeModel

/// `GET /v1/me/subscriptions`: the signed-in user's auto-renewable subscriptions, one per subscription group; `GET
/// /v1/me/subscriptions/{original_transaction_id}/history`: every period of one of them.
struct SubscriptionsController {
    let subscriptions: Subscriptions

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("me/subscriptions") { _, context in
            let user = try context.requireUser()
            return try Response.json(try await subscriptions.of(userID: user.id))
        }
        group.get("me/subscriptions/:original_transaction_id/history") { _, context in
            let user = try context.requireUser()
            let chain = try context.parameters.require("original_transaction_id")
            guard (1...64).contains(chain.utf8.count),
                let history = try await subscriptions.history(userID: user.id, chain: chain)
            else {
                throw APIError(
                    status: .notFound, code: "subscription_not_found", message: "no such subscription of yours")
            }
            return try Response.json(history)
        }
    }
}
