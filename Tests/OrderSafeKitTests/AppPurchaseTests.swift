import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// StoreKit's `AppTransaction` sent to the server with the user, and the server's answer checked as every answer
/// about a user is.
@Suite("The app's own purchase, sent with the user")
struct AppPurchaseTests {
    @Test("sent as StoreKit signed it; without one, what the server knows; signed out, nothing; another user's refused")
    func sentWithTheUser() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        let answer = try await app.sendAppTransaction()
        #expect(answer.userID == "user-1" && answer.originalApplicationVersion == "1.0")
        #expect(await h.server.appTransactions["user-1"] == ["app.jws"], "the JWS as StoreKit gave it")

        await h.store.set(appTransaction: nil)  // before iOS 16: nothing to send, the server's word read
        #expect(try await app.sendAppTransaction().purchases.count == 1)
        #expect(await h.server.appTransactions["user-1"]?.count == 1)

        let mixed = h.app(signedIn: "user-1", tokenOf: "user-2")
        await #expect(throws: OrderSafeError.server(.tokenOfAnotherUser)) { try await mixed.sendAppTransaction() }

        await app.logOut()
        await #expect(throws: OrderSafeError.server(.signedOut)) { try await app.sendAppTransaction() }
    }
}
