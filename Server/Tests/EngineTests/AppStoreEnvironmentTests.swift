import AppStore
import Engine
import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Sandbox
import Testing

/// Apple's guidance for a production server: App Review buys in the Sandbox, so Sandbox data must be accepted by a
/// second verifier, and such orders kept apart as sandbox.
@Suite("App Store environments: Production first, Sandbox data accepted and marked")
struct AppStoreEnvironmentTests {
    static let authority = try! SandboxAppStoreCA(now: EngineFixtures.now)

    static func verifier(_ environment: AppStoreEnvironment) throws -> SignedDataVerifier {
        SignedDataVerifier(
            rootCertificates: try AppleRootCertificates.load([authority.rootDER], requireApple: false),
            bundleID: "com.example.app",
            appAppleID: 1234, environment: environment, clock: FixedClock(date: EngineFixtures.now))
    }

    static func payments(_ ledger: SQLLedger, fallback: Bool) async throws -> AppStorePayments {
        let catalog = try await ActiveCatalog.activate(EngineFixtures.catalog, in: ledger, at: EngineFixtures.now)
        let clock = FixedClock(date: EngineFixtures.now)
        return AppStorePayments(
            verifier: AppStoreVerifier(
                primary: try verifier(.production), sandbox: fallback ? try verifier(.sandbox) : nil),
            receipts: nil, identities: OrderIdentityGenerator(clock: clock),
            context: EngineContext(ledger: ledger, catalog: catalog, clock: clock, logger: TestLog.logger))
    }

    static func sandboxPurchase() throws -> String {
        try authority.sign(
            #"{"transactionId":"2000000900000001","originalTransactionId":"2000000900000001","bundleId":"com.example.app","productId":"com.example.ordersafe.coins60","purchaseDate":1795000000000,"originalPurchaseDate":1795000000000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","signedDate":1795000000000,"environment":"Sandbox","transactionReason":"PURCHASE","price":6000,"currency":"CNY"}"#
        )
    }

    @Test(
        "a Production server records App Review's Sandbox purchase, marked sandbox; without the second verifier it is held",
        arguments: TestEngine.available)
    func sandboxAtProduction(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let accepting = try await Self.payments(ledger, fallback: true)
            let result = try await accepting.submit(
                AppStoreSubmission(signedTransaction: try Self.sandboxPurchase()), userID: "reviewer")
            #expect(result.verdict == .recorded && result.transactions.first?.order?.sandbox == true)
            #expect(try await ledger.holdings(userID: "reviewer", at: EngineFixtures.now).balances.first?.amount == 60)

            // Without it, the environment is this server's setting: held (kept unfinished on the device), no verdict.
            let strict = try await Self.payments(ledger, fallback: false)
            do {
                _ = try await strict.submit(
                    AppStoreSubmission(signedTransaction: try Self.sandboxPurchase()), userID: "tester")
                Issue.record("a Sandbox purchase at a strict Production server was answered")
            } catch AppStoreSubmissionError.unverifiable(let reason) {
                #expect(reason.contains("INVALID_ENVIRONMENT"), "\(reason)")
            }
            #expect(try await ledger.heldSubmissions(after: 0, limit: 10).count == 1)
        }
    }
}
