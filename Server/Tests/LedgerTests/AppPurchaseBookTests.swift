import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@Suite("The app's purchases kept per user and Apple ID")
struct AppPurchaseBookTests {
    @Test(
        "kept once per Apple ID, its latest word kept, earliest first, bounded per user",
        arguments: TestEngine.available)
    func keptAndBounded(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            func purchase(_ id: String, _ version: String, _ day: Double?) -> AppPurchase {
                AppPurchase(
                    appTransactionID: id, originalApplicationVersion: version,
                    originalPurchaseDate: day.map { Date(timeIntervalSince1970: $0 * 86400) }, environment: "Sandbox")
            }
            #expect(try await ledger.noteAppPurchase(purchase("new", "1.0", 200), userID: "alice", at: Fixtures.now))
            #expect(try await ledger.noteAppPurchase(purchase("old", "0.8", 100), userID: "alice", at: Fixtures.now))
            #expect(try await ledger.noteAppPurchase(purchase("old", "0.9", 100), userID: "alice", at: Fixtures.now))
            #expect(
                try await ledger.noteAppPurchase(purchase("undated", "1.1", nil), userID: "alice", at: Fixtures.now))
            let kept = try await ledger.appPurchases(userID: "alice")
            #expect(kept.map(\.appTransactionID) == ["old", "new", "undated"])
            #expect(kept.first?.originalApplicationVersion == "0.9", "its latest word")
            #expect(try await ledger.appPurchases(userID: "bob").isEmpty)
            for index in 3..<AppPurchaseLimit.perUser {
                #expect(
                    try await ledger.noteAppPurchase(
                        purchase("id-\(index)", "1.0", 300), userID: "alice", at: Fixtures.now))
            }
            #expect(
                try await !ledger.noteAppPurchase(
                    purchase("one-too-many", "1.0", 300), userID: "alice", at: Fixtures.now))
            #expect(
                try await ledger.noteAppPurchase(purchase("old", "0.9", 100), userID: "alice", at: Fixtures.now),
                "a known one again is kept")
        }
    }
}
