import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// Entitlements shown offline: the server's last answer for this user, else, on a fresh install, what StoreKit's
/// verified current entitlements grant, marked unconfirmed until the server answers.
@Suite("Entitlements offline, on a fresh install too")
struct OfflineEntitlementsTests {
    @Test("online: the server's; offline: the cached answer; fresh install offline: the device's, unconfirmed")
    func fallbacks() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let app = h.app(now: { start })
        #expect(await app.purchase("vip", through: .appStore).state == .fulfilled)
        await h.store.entitle("vip.ios")
        let online = try await app.shownEntitlements()
        #expect(online.source == .server && online.isConfirmed)

        await h.server.set(offline: true)
        #expect(try await app.shownEntitlements().source == .cached, "the last answer the server gave her")

        // A fresh install: nothing cached; the catalog came (from a cache in front of the server) before it went.
        try FileManager.default.removeItem(at: h.folder.appendingPathComponent("entitlements.cache"))
        await h.server.set(offline: false)
        let fresh = h.app(now: { start })
        _ = try await fresh.products()
        await h.server.set(offline: true)
        let device = try await fresh.shownEntitlements()
        #expect(device.source == .device && !device.isConfirmed)
        #expect(device.holdings.userID == "user-1" && device.holdings.balances.isEmpty)
        let vip = try #require(device.holdings.entitlements.first)
        #expect(device.holdings.entitlements.map(\.name) == ["vip"] && vip.active)
        #expect(vip.expiresAt.map { abs($0.timeIntervalSince(start) - 31 * 86400) < 4 * 86400 } == true)
        #expect(fresh.snapshot().entitlements == nil, "the device's word is not announced as the user's")
        #expect(!FileManager.default.fileExists(atPath: h.folder.appendingPathComponent("entitlements.cache").path))

        // Unverified on this device: not shown.
        await h.store.set(verifies: false)
        #expect(try await fresh.shownEntitlements().holdings.entitlements.isEmpty)

        // The server back: its answer, confirmed.
        await h.server.set(offline: false)
        #expect(try await fresh.shownEntitlements().source == .server)
    }

    @Test("signed out: nothing, from anywhere")
    func signedOut() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        await app.logOut()
        await #expect(throws: OrderSafeError.server(.signedOut)) { try await app.shownEntitlements() }
    }
}
