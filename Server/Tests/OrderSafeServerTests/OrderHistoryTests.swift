import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// `GET /v1/me/orders`: the signed-in user's orders for a support screen, newest first, a page at a time.
@Suite("The user's order history")
struct OrderHistoryTests {
    @Test(
        "pages of the user's own orders, newest first, each once; another user's never; a cursor or parameter out of shape is refused"
    )
    func pages() async throws {
        let alice = try await TestServer.token("alice")
        let bob = try await TestServer.token("bob")
        try await TestServer.withComponents { client, _, clock in
            var made: [String] = []
            for _ in 0..<5 {
                clock.advance(by: 1)
                let created = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self)
                made.append(created.order.orderNo)
            }
            _ = try await TestServer.createOrder(client, token: bob)
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let query = "limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await client.execute(
                    uri: "/v1/me/orders?\(query)", method: .get, headers: TestServer.bearer(alice))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let page = try response.decoded(OrderHistoryResponse.self)
                #expect(page.orders.count <= 2 && page.orders.allSatisfy { $0.userID == "alice" })
                seen += page.orders.map(\.orderNo)
                cursor = page.next
                pages += 1
            } while cursor != nil && pages < 10
            #expect(seen == made.reversed(), "newest first, each once")
            #expect(pages == 3)

            let theirs = try await client.execute(uri: "/v1/me/orders", method: .get, headers: TestServer.bearer(bob))
            #expect(try theirs.decoded(OrderHistoryResponse.self).orders.count == 1)
            for bad in ["cursor=12", "cursor=1_2_3", "limit=0", "limit=101", "limit=x", "user=bob", "limit=2&limit=3"] {
                let refused = try await client.execute(
                    uri: "/v1/me/orders?\(bad)", method: .get, headers: TestServer.bearer(alice))
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(String(buffer: refused.body).contains(#""code":"invalid_query""#), "\(bad)")
            }
            let anonymous = try await client.execute(uri: "/v1/me/orders", method: .get)
            #expect(anonymous.status == .unauthorized)
        }
    }
}
