import Hummingbird
import Ledger
import OrderSafeModel

/// `GET /v1/me/entitlements`: the signed-in user's balances and entitlements.
struct HoldingsController {
    let ledger: any HoldingsReader
    let clock: any WallClock

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("me/entitlements") { _, context in
            let user = try context.requireUser()
            return try Response.json(try await ledger.holdings(userID: user.id, at: clock.now()))
        }
    }
}
