import Engine
import Hummingbird
import Ledger
import OrderSafeModel

/// `GET /v1/me/entitlements`: the signed-in user's balances and entitlements.
struct HoldingsController {
    let ledger: any HoldingsReader
    /// Keeps the access of subscriptions in a billing grace period.
    let subscriptions: Subscriptions
    let clock: any WallClock

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("me/entitlements") { _, context in
            let user = try context.requireUser()
            let holdings = try await ledger.holdings(userID: user.id, at: clock.now())
            return try Response.json(try await subscriptions.keepingGraceAccess(holdings))
        }
    }
}
