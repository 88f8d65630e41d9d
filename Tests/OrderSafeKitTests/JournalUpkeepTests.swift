import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// Entries that can no longer settle leave the journal instead of filling it (256 entries, then every purchase is
/// refused).
@Suite("Journal upkeep: what can no longer settle leaves the journal")
struct JournalUpkeepTests {
    @Test(
        "an Ask to Buy request never answered (or declined: StoreKit does not say) is given up after three days; one still young stays"
    )
    func declinedAskToBuy() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let clock = VerdictRuleTests.Clock()
        let app = h.app(now: { clock.now() })
        await h.store.set(sheet: .askToBuy)
        #expect(await app.purchase("coins", through: .appStore).state == .pending)
        clock.advance(by: 86400)
        #expect(await app.resume().map(\.state) == [.pending])
        #expect(h.journalFiles.count == 1)
        clock.advance(by: 2 * 86400 + 1)
        #expect(await app.resume().map(\.state) == [.cancelled])
        #expect(h.journalFiles.isEmpty)
        #expect(await h.server.orders.values.map(\.status) == [.cancelled])
    }

    @Test("a pending entry whose order the server has closed leaves the journal at the next resume")
    func closedOnTheServer() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(sheet: .askToBuy)
        let app = h.app()
        let pending = await app.purchase("coins", through: .appStore)
        #expect(pending.state == .pending)
        await h.server.close(orderNo: try #require(pending.orderNo))
        #expect(await app.resume().map(\.state) == [.cancelled])
        #expect(h.journalFiles.isEmpty)
    }
}
