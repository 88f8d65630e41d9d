import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@Suite("Ledger: money from a provider's test environment is never revenue")
struct SandboxMarkerTests {
    @Test(
        "a sandbox payment marks the order it advances as sandbox, stored; the overview's revenue leaves it out",
        arguments: TestEngine.available)
    func sandboxPaymentMarksItsOrder(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            var payment = Fixtures.payment(order, txn: "2000000123456789")
            payment.sandbox = true
            guard case .fulfilled = try await ledger.fulfil(payment, at: Fixtures.now) else {
                Issue.record("not fulfilled")
                return
            }
            // Read back from the database, not from what fulfil answered.
            #expect(try await ledger.order(number: order.orderNo)?.sandbox == true)
            #expect(try await ledger.dossier(orderNo: order.orderNo)?.order.sandbox == true)
            let overview = try await ledger.overview(
                now: Fixtures.now.addingTimeInterval(3600), days: 30, zone: TimeZone(identifier: "UTC")!)
            #expect(overview.revenue.isEmpty, "sandbox money counted as revenue: \(overview.revenue)")
            // A real payment of another order is revenue.
            let real = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity).order
            _ = try await ledger.fulfil(Fixtures.payment(real, txn: "2000000123456790"), at: Fixtures.now)
            #expect(try await ledger.order(number: real.orderNo)?.sandbox == false)
            let after = try await ledger.overview(
                now: Fixtures.now.addingTimeInterval(3600), days: 30, zone: TimeZone(identifier: "UTC")!)
            #expect(after.revenue.map(\.amount) == [real.amount])
        }
    }
}
