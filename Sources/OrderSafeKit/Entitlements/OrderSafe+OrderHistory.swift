import Foundation
import OrderSafeModel

extension OrderSafe {
    /// The signed-in user's orders, newest first, `limit` (1 to 100) at a time, for a support screen: pass a page's
    /// `next` as `cursor` for the next, older page (`next` is nil on the last). Each order carries its status,
    /// product, channel, amount and times. Signed out: ``ServerProblem/signedOut``; an answer holding another user's
    /// order is refused (``ServerProblem/tokenOfAnotherUser``), as is one that arrives after another user signed in.
    public func orderHistory(cursor: String? = nil, limit: Int = 20) async throws(OrderSafeError)
        -> OrderHistoryResponse
    {
        guard let asked = userID else { throw .server(.signedOut) }
        let page: OrderHistoryResponse
        do {
            page = try await api.orderHistory(after: cursor, limit: min(max(limit, 1), 100))
        } catch let problem as ServerProblem {
            throw .server(problem)
        } catch {
            throw .server(.malformedAnswer("\(error)"))
        }
        guard page.orders.allSatisfy({ $0.userID == asked }) else { throw .server(.tokenOfAnotherUser) }
        guard userID == asked else { throw .server(.userChanged) }
        return page
    }
}
