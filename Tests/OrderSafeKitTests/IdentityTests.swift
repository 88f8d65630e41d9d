import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// Whose purchases, entitlements and outcomes OrderSafeKit shows: the signed-in user's only.
@Suite("Identity: one user's purchases and entitlements are never shown to another")
struct IdentityTests {
    @Test(
        "signed out, entitlements are refused and the cache is gone; offline, another user never gets the last user's")
    func entitlementsBelongToTheirUser() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        let first = h.app()
        #expect(await first.purchase("coins", through: .appStore).state == .fulfilled)
        #expect(try await first.entitlements().balances == [Balance(name: "coins", amount: 60)])
        await h.server.set(offline: true)
        #expect(try await first.entitlements().balances.first?.amount == 60, "offline: the user's own cache")

        // Another person signs in on this phone while it is offline: nothing of the first user's shows.
        h.user = "user-2"
        let second = h.app()
        do {
            let shown = try await second.entitlements()
            Issue.record("offline, user-2 was shown \(shown.userID)'s entitlements")
        } catch {}

        // The first user signs out: refused, and the cache is gone from the disk.
        await first.logOut()
        do {
            _ = try await first.entitlements()
            Issue.record("signed out, entitlements were shown")
        } catch {
            #expect(error == .server(.signedOut))
        }
        #expect(!FileManager.default.fileExists(atPath: h.folder.appendingPathComponent("entitlements.cache").path))
        #expect(await first.purchase("coins", through: .appStore).state == .failed(.server(.signedOut)))
    }

    @Test("a token of another user than the signed-in one: its entitlements are neither shown nor kept")
    func tokenOfAnotherUser() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        _ = await h.app().purchase("coins", through: .appStore)
        let confused = h.app(signedIn: "user-2", tokenOf: "user-1")
        do {
            let shown = try await confused.entitlements()
            Issue.record("user-2 was shown \(shown.userID)'s entitlements")
        } catch {
            #expect(error == .server(.tokenOfAnotherUser))
        }
        await h.server.set(offline: true)
        await #expect(throws: OrderSafeError.self) { try await confused.entitlements() }
    }

    @Test(
        "a purchase another user left on the phone is carried through for its owner, and none of it is shown to who signs in next"
    )
    func anotherUsersPurchaseIsNotShown() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        try await Self.chargedThenSignedOut(h)

        h.user = "user-2"
        let second = h.app()
        let events = second.events()
        // The server cannot answer at first (the first user's transaction waits), then it can.
        await h.server.failSubmissions(1)
        let outcomes = await second.resume() + second.resume()
        await second.stop()
        var shown: [OrderSafeEvent] = []
        for await event in events { shown.append(event) }
        #expect(outcomes.isEmpty, "\(outcomes.map(\.name))")
        #expect(!shown.contains { if case .purchaseOutcome = $0 { true } else { false } }, "\(shown)")
        #expect(await h.store.unfinished().isEmpty, "finished once its owner's order was credited")
        let balances = await h.server.balances
        #expect(balances["user-1"] == 60 && balances["user-2"] == nil)
        #expect(h.journalStages == [.recordedForOwner], "kept for its buyer's next launch")

        h.user = "user-1"
        let told = await h.app().start()
        #expect(told.map(\.state) == [.fulfilled], "its buyer hears it was paid: \(told.map(\.name))")
        #expect(h.journalFiles.isEmpty)
    }

    /// user-1 buys through the App Store; the store charged, the server could not record it before the app was
    /// closed, and user-1 signed out.
    static func chargedThenSignedOut(_ h: Harness) async throws {
        let first = h.app()
        _ = try await first.products()
        await h.server.failSubmissions(1)
        #expect(await first.purchase("coins", through: .appStore).state == .awaitingConfirmation)
        await first.logOut()
    }

    @Test("a purchase recorded for a buyer who does not sign in again waits for their launch thirty days at most")
    func ownerNoticeLapses() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        try await Self.chargedThenSignedOut(h)

        h.user = "user-2"
        let clock = VerdictRuleTests.Clock()
        let second = h.app(now: { clock.now() })
        #expect(await second.resume().isEmpty)
        #expect(h.journalStages == [.recordedForOwner])
        clock.advance(by: 29 * 86400)
        #expect(await second.resume().isEmpty && h.journalStages == [.recordedForOwner])
        clock.advance(by: 2 * 86400)
        #expect(await second.resume().isEmpty)
        #expect(h.journalFiles.isEmpty)
        #expect(await h.server.balances["user-1"] == 60)
    }

    @Test(
        "entitlements asked for one user and answered after another signed in: neither shown to the second nor kept; the first's own answer is theirs again"
    )
    func fetchAcrossASignIn() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let signedIn = Harness.SignedIn("user-1")
        let app = h.app(switching: signedIn)
        #expect(await app.purchase("coins", through: .appStore).state == .fulfilled)
        await h.server.set(entitlementsDelay: .milliseconds(300))
        let (start, events) = app.follow()
        #expect(start.entitlements?.userID == "user-1")
        let fetch = Task { try await app.entitlements(allowCached: false) }
        try await Task.sleep(for: .milliseconds(50))
        signedIn.change(to: "user-2")
        await app.logIn("user-2")
        let answered = await fetch.result
        #expect(throws: OrderSafeError.server(.userChanged)) { try answered.get() }
        let snapshot = app.snapshot()
        #expect(snapshot.userID == "user-2" && snapshot.entitlements?.userID != "user-1", "\(snapshot)")
        await app.stop()
        var afterSignIn = false
        var shownAfter: [String] = []
        for await event in events {
            if case .signedIn("user-2") = event { afterSignIn = true }
            if afterSignIn, case .entitlementsChanged(let holdings) = event { shownAfter.append(holdings.userID) }
        }
        #expect(!shownAfter.contains("user-1"), "user-1's entitlements were sent after user-2 signed in")
    }

    @Test("a purchase one user began and that ends after another signed in: its outcome is not shown to the second")
    func outcomeAcrossASignIn() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let signedIn = Harness.SignedIn("user-1")
        let app = h.app(switching: signedIn)
        await h.server.set(submissionDelay: .milliseconds(300))
        let buying = Task { await app.purchase("coins", through: .appStore) }
        try await Task.sleep(for: .milliseconds(100))
        signedIn.change(to: "user-2")
        await app.logIn("user-2")
        let outcome = await buying.value
        #expect(outcome.userID == "user-1", "the caller who tapped hears the outcome of their purchase")
        let snapshot = app.snapshot()
        #expect(snapshot.userID == "user-2")
        #expect(snapshot.purchases.isEmpty, "user-2 is shown nothing of user-1's purchase: \(snapshot.purchases)")
        #expect(snapshot.entitlements?.userID != "user-1")
        // Nothing was lost: the first user's coins are theirs on the server.
        #expect(await h.server.balances["user-1", default: 0] == 60)
        #expect(await h.server.balances["user-2", default: 0] == 0)
    }

    @Test(
        "restore: refused before the App Store's sign-in when nobody is signed in to the app; past 100 transactions in pages; another account's purchases named"
    )
    func restoreTellsWhose() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        let first = h.app()
        for _ in 0..<3 { #expect(await first.purchase("coins", through: .appStore).state == .fulfilled) }
        await h.store.entitle("coins.ios")

        // Signed out: nothing is asked, not even the App Store's sign-in.
        await first.logOut()
        await #expect(throws: OrderSafeError.server(.signedOut)) { try await first.restore() }
        #expect(await h.store.syncs == 0)

        // Another app user on the same phone and Apple ID, which also bought 200 more elsewhere.
        await h.store.bought("coins.ios", count: 200)
        h.user = "user-2"
        let second = h.app()
        let restored = try await second.restore()
        #expect(await h.store.syncs == 1)
        #expect(restored.transactions.count == 203, "every transaction the store holds, not the first 100")
        #expect(await h.server.syncRequests == 3, "a hundred at a time")
        #expect(restored.ownedByOtherAccounts.count == 3, "user-1's three purchases are named as another account's")
        #expect(restored.holdings.userID == "user-2" && restored.holdings.balances.first?.amount == 200 * 60)
    }
}
