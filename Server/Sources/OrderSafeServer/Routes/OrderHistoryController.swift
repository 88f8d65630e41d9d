import Hummingbird
import Ledger
import OrderSafeModel

/// `GET /v1/me/orders?cursor=&limit=`: the signed-in user's orders, newest first, a page at a time (keyset paging on
/// the ledger's `(user_id, created_at)` index: a page costs the same at the thousandth order as at the first).
struct OrderHistoryController {
    let ledger: any OperatorReads

    /// The most orders one page holds, and how many when `limit` is not given.
    static let maxLimit = 100
    static let defaultLimit = 20

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("me/orders") { request, context in
            let user = try context.requireUser()
            var query = OrderQuery(userID: user.id, limit: Self.defaultLimit)
            var seen: Set<String> = []
            for (name, value) in request.uri.queryParameters {
                let name = String(name)
                guard seen.insert(name).inserted else {
                    throw APIError.badRequest("invalid_query", "'\(name.prefix(32))' is given more than once")
                }
                switch name {
                case "cursor":
                    guard let cursor = OrderCursor(String(value)) else {
                        throw APIError.badRequest("invalid_query", "'cursor' is not one this server gave")
                    }
                    query.after = cursor
                case "limit":
                    guard let limit = Int(String(value)), (1...Self.maxLimit).contains(limit) else {
                        throw APIError.badRequest("invalid_query", "'limit' must be 1 to \(Self.maxLimit)")
                    }
                    query.limit = limit
                default:
                    throw APIError.badRequest(
                        "invalid_query", "'\(name.prefix(32))' is not a parameter; use cursor, limit")
                }
            }
            let page = try await ledger.orders(query)
            return try Response.json(OrderHistoryResponse(orders: page.orders, next: page.next?.description))
        }
    }
}
