import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// What OrderSafeKit must do once however many of its parts meet the same work: a transaction, a journal entry, a
/// give-up. Each test fails when the guard it names is removed (scripts/mutants.d).
@Suite("Shared work: one recording, one owner of an entry, no give-up on an open order")
struct SharedWorkTests {
    @Test("one transaction met by the listener, a sweep and a purchase at once is submitted once and finished once")
    func concurrentRecordingsShareOne() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        _ = try await app.products()
        await h.server.set(submissionDelay: .milliseconds(50))
        // Bought on another device of the Apple ID: the server adopts it for the user who submits it.
        let transaction = await h.store.chargeElsewhere(productID: "coins.ios", token: UUID())
        async let listener = app.process(transaction)
        async let purchase = app.process(transaction)
        async let sweep = app.resume()
        let outcomes = await [listener, purchase].compactMap { $0 } + sweep
        #expect(outcomes.allSatisfy { $0.state == .fulfilled }, "\(outcomes.map(\.name))")
        #expect(await h.server.requests.filter { $0.hasSuffix("/v1/appstore/transactions") }.count == 1)
        #expect(await h.store.finishCount == [transaction.id: 1])
        #expect(await h.server.balances["user-1"] == 60)
    }

    @Test("a sweep while a purchase holds its entry (the payment app still open) leaves that entry to the purchase")
    func resumeLeavesEntriesInFlight() async throws {
        let probe = Harness()
        defer { probe.cleanUp() }
        _ = await probe.app().purchase("gift", through: .alipay)
        let open = try #require(await probe.crash.steps.firstIndex(of: "alipay app: open"))
        let h = Harness(crashAt: open)
        defer { h.cleanUp() }
        let app = h.app()
        let purchase = Task { await app.purchase("gift", through: .alipay) }
        while await h.crash.crashed == nil { try await Task.sleep(for: .milliseconds(1)) }
        // The user is in the Alipay app; the app comes to the foreground for another reason and sweeps.
        let swept = await app.resume()
        #expect(swept.isEmpty, "the sweep reported the purchase in flight: \(swept.map(\.name))")
        #expect(await h.server.orders.values.map(\.status) == [.created], "the sweep cancelled the order being paid")
        #expect(!(await h.server.requests.contains { $0.hasSuffix("/cancel") }))
        #expect(h.journalFiles.count == 1)
        purchase.cancel()
    }

    @Test(
        "a sweep while a purchase's intent is on disk and its order is being created leaves the intent to the purchase")
    func resumeLeavesTheIntentBeingOrdered() async throws {
        let probe = Harness()
        defer { probe.cleanUp() }
        _ = await probe.app().purchase("coins", through: .appStore)
        let steps = await probe.crash.steps
        let ordering = try #require(steps.firstIndex(of: "server: POST v1/orders"), "\(steps)")
        let h = Harness(crashAt: ordering)
        defer { h.cleanUp() }
        let app = h.app()
        let purchase = Task { await app.purchase("coins", through: .appStore) }
        while await h.crash.crashed == nil { try await Task.sleep(for: .milliseconds(1)) }
        // The intent is on disk, the order's creation unanswered; the app comes to the foreground and sweeps.
        #expect(h.journalFiles.count == 1)
        let swept = await app.resume()
        #expect(swept.isEmpty, "the sweep took the intent being ordered: \(swept.map(\.name))")
        #expect(
            !(await h.server.requests.contains { $0.hasSuffix("/cancel") }),
            "the sweep cancelled the order being bought")
        #expect(await h.server.orders.isEmpty, "the sweep created the order itself")
        #expect(h.journalFiles.count == 1)
        purchase.cancel()
    }

    @Test("a provider order the server will not cancel and that is not final stays in the journal, then settles")
    func giveUpOnlyOnFinal() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        h.vendors.alipayStatus = "6001"  // the buyer backs out of the Alipay app…
        let app = h.app()
        await h.server.set(refusesCancellation: true)  // …but Alipay still reports the trade as being paid
        let outcome = await app.purchase("gift", through: .alipay)
        #expect(outcome.state == .awaitingConfirmation)
        #expect(h.journalFiles.count == 1, "an order that is neither paid nor cancelled was dropped from the journal")
        let orderNo = try #require(outcome.orderNo)
        await h.server.pay(orderNo: orderNo)
        await h.server.set(refusesCancellation: false)
        #expect(await app.resume().map(\.state) == [.fulfilled])
        #expect(h.journalFiles.isEmpty)
    }
}
