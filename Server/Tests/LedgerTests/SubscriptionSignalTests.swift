import Foundation
import Ledger
import LedgerTestSupport
import Testing

/// Which version of a transaction the ledger keeps: the later signed; of two signed in the same millisecond, the
/// revoked one; in SQL (both engines) as in Swift, whatever the order they arrive in.
@Suite("Subscription signals: the version kept")
struct SubscriptionSignalTests {
    static func version(revoked: Bool, productID: String) -> SubscriptionSignal {
        var signal = SubscriptionSignal(chain: "1000", kind: .transaction, signedAt: 1_795_000_000_000)
        signal.transactionID = "1000"
        signal.productID = productID
        signal.expiresAt = 1_795_000_300_000
        if revoked { signal.revokedAt = 1_795_000_000_000 }
        return signal
    }

    @Test(
        "signed in the same millisecond, the revoked version is kept, in either order", arguments: TestEngine.available)
    func revokedWinsATie(engine: TestEngine) async throws {
        // The unrevoked version's text is the greater one ("zz…" > "com…"): text alone would keep it.
        let sold = Self.version(revoked: false, productID: "zz.monthly")
        let refunded = Self.version(revoked: true, productID: "com.monthly")
        #expect(sold.stored > refunded.stored)
        #expect(refunded.supersedes(sold) && !sold.supersedes(refunded))
        for order in [[sold, refunded], [refunded, sold]] {
            try await engine.withLedger { _, ledger in
                for signal in order { try await ledger.recordSubscriptionSignal(signal) }
                #expect(try await ledger.subscriptionSignals(chain: "1000").map(\.revokedAt) == [1_795_000_000_000])
            }
        }
    }
}
