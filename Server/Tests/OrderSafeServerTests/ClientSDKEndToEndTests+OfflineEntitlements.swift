import Foundation
import LedgerTestSupport
import OrderSafeKit
import OrderSafeModel
import Synchronization
import Testing

@testable import OrderSafeServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Entitlements on a fresh install while the API is down (the catalog still served, as a CDN in front would): what
/// StoreKit on the phone verified, shown as unconfirmed, until the server answers.
extension ClientSDKEndToEndTests {
    /// The OrderSafe API down (every call but the public catalog refused) while `down` says so.
    final class APIOutage: HTTPTransport {
        let real = ClientSDKEndToEndTests.liveTransport()
        let down = Mutex(false)

        func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
            if down.withLock({ $0 }), request.url?.path != "/v1/catalog" { throw URLError(.cannotConnectToHost) }
            return try await real.send(request)
        }
    }

    @Test(
        "a fresh install while the API is down: the phone's verified entitlements, unconfirmed; the server's once back",
        .timeLimit(.hang))
    func freshInstallOfflineEntitlements() async throws {
        try await Self.withLiveServer(phone: "fresh-install") { base, alice, folder in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "fresh-install-phone"))
            let first = Self.app(base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("a"))
            #expect(await first.purchase("vip_monthly", through: .appStore).state == .fulfilled)
            await first.stop()

            // The app deleted and installed again: no journal, no cache; the API down, the catalog served.
            let outage = APIOutage()
            let fresh = Self.app(
                base: base, token: alice, journal: folder.appendingPathComponent("b"), transport: outage,
                clock: MovableClock())
            outage.down.withLock { $0 = true }
            let shown = try await fresh.shownEntitlements()
            #expect(shown.source == .device && !shown.isConfirmed)
            #expect(shown.holdings.entitlements.map(\.name) == ["vip"])
            #expect(shown.holdings.entitlements.first?.expiresAt.map { $0 > Date() } == true)

            outage.down.withLock { $0 = false }
            let back = try await fresh.shownEntitlements()
            #expect(back.source == .server && back.holdings.entitlements.map(\.name) == ["vip"])
        }
    }
}
