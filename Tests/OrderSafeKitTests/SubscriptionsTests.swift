import Foundation
import Testing

@testable import OrderSafeKit

/// The signed-in user's subscriptions, as the server states them: shown to that user only, kept for offline reads,
/// gone at sign-out.
@Suite("Subscriptions: the server's state, the signed-in user's only")
struct SubscriptionsTests {
    static let grace = UserSubscription(
        groupID: "21000001", state: .inGracePeriod, productID: "vip.monthly", renewalProductID: "vip.monthly",
        autoRenew: true, expiresAt: Date(timeIntervalSince1970: 1_790_000_000),
        gracePeriodEndsAt: Date(timeIntervalSince1970: 1_791_382_400), lastTransactionID: "1001",
        originalTransactionID: "1000")

    @Test("loaded, announced and in the snapshot; offline, the user's own copy; another user never sees it")
    func subscriptionsBelongToTheirUser() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        await h.server.set(subscriptions: [Self.grace], for: "user-1")
        let app = h.app()
        let (_, events) = app.follow()
        let loaded = try await app.subscriptions()
        #expect(loaded.subscriptions == [Self.grace])
        #expect(loaded.subscriptions.first?.state.grantsAccess == true)
        #expect(app.snapshot().subscriptions == loaded)
        for await event in events {
            if case .subscriptionsChanged(let announced) = event {
                #expect(announced == loaded)
                break
            }
        }
        await h.server.set(offline: true)
        #expect(try await app.subscriptions() == loaded, "offline: the user's own cache")
        await #expect(throws: OrderSafeError.self) { try await app.subscriptions(allowCached: false) }

        h.user = "user-2"
        let other = h.app()
        await #expect(throws: OrderSafeError.self) { try await other.subscriptions() }

        await app.logOut()
        #expect(app.snapshot().subscriptions == nil)
        #expect(!FileManager.default.fileExists(atPath: h.folder.appendingPathComponent("subscriptions.cache").path))
        do {
            _ = try await app.subscriptions()
            Issue.record("signed out, subscriptions were shown")
        } catch {
            #expect(error == .server(.signedOut))
        }
    }

    @Test("a token of another user than the signed-in one: its subscriptions are neither shown nor kept")
    func tokenOfAnotherUser() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.server.set(subscriptions: [Self.grace], for: "user-1")
        let confused = h.app(signedIn: "user-2", tokenOf: "user-1")
        do {
            let shown = try await confused.subscriptions()
            Issue.record("user-2 was shown \(shown.userID)'s subscriptions")
        } catch {
            #expect(error == .server(.tokenOfAnotherUser))
        }
        #expect(confused.snapshot().subscriptions == nil)
    }
}
