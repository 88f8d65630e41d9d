import Engine
import Hummingbird
import OrderSafeModel

/// `GET /v1/me/subscriptions`: the signed-in user's auto-renewable subscriptions, one per subscription group.
struct SubscriptionsController {
    let subscriptions: Subscriptions

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("me/subscriptions") { _, context in
            let user = try context.requireUser()
            return try Response.json(try await subscriptions.of(userID: user.id))
        }
    }
}
