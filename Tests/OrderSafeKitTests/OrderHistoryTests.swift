import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// `orderHistory()`: the signed-in user's orders from the server, a page at a time (a support screen).
@Suite("Order history")
struct OrderHistoryTests {
    @Test("pages of the signed-in user's orders, newest first, each once; signed out, nothing is asked")
    func pages() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = ReturnWithoutCallbackTests.app(h, ReturnWithoutCallbackTests.SilentPaymentApps(server: h.server))
        var bought: [String] = []
        for _ in 0..<3 {
            let outcome = await app.purchase("gift", through: .alipay)
            #expect(outcome.state == .fulfilled, "\(outcome.name)")
            bought.append(try #require(outcome.orderNo))
        }
        let first = try await app.orderHistory(limit: 2)
        #expect(first.orders.count == 2 && first.next != nil)
        let second = try await app.orderHistory(cursor: first.next, limit: 2)
        #expect(second.orders.count == 1 && second.next == nil)
        let seen = (first.orders + second.orders).map(\.orderNo)
        #expect(Set(seen) == Set(bought) && seen.count == 3, "each once")
        #expect((first.orders + second.orders).allSatisfy { $0.status == .fulfilled && $0.userID == "user-1" })
        #expect(await h.server.requests.contains("GET /v1/me/orders"))

        await app.logOut()
        await #expect(throws: OrderSafeError.server(.signedOut)) { try await app.orderHistory() }
    }
}
