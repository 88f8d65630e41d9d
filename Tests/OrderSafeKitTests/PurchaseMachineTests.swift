import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// Every state of the purchase machine, against a fake store and a fake server.
@Suite("Purchase machine")
struct PurchaseMachineTests {
    @Test("App Store: recorded, then finished once; the journal is empty and the balance credited")
    func appStoreFulfilled() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let outcome = await h.app().purchase("coins", through: .appStore)
        #expect(outcome.state == .fulfilled)
        #expect(await h.store.finishCount == [1001: 1])
        #expect(await h.server.balances["user-1"] == 60)
        #expect(h.journalFiles.isEmpty)
    }

    @Test(
        "no answer to the order's creation: the purchase fails, the intent stays, and the next resume finds the order and cancels it"
    )
    func orderCreationUnanswered() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        _ = try await app.products()
        await h.server.set(offline: true)
        let outcome = await app.purchase("coins", through: .appStore)
        #expect(outcome.state == .failed(.server(.unreachable("URLError -1009"))))
        #expect(outcome.message(in: .simplifiedChinese).contains("无法连接服务器"))
        #expect(h.journalFiles.count == 1)
        await h.server.set(offline: false)
        #expect(await app.resume().map(\.state) == [.cancelled])
        #expect(h.journalFiles.isEmpty)
        #expect(await h.store.charged.isEmpty)
    }

    @Test(
        "App Store: killed at the purchase sheet, relaunched while the server cannot answer: waiting, never cancelled; then cancelled once the store's delivery window is over"
    )
    func relaunchWithoutAnswer() async throws {
        let probe = Harness()
        defer { probe.cleanUp() }
        _ = await probe.app().purchase("coins", through: .appStore)
        let sheet = try #require(await probe.crash.steps.firstIndex(of: "store: sheet"))
        let h = Harness(crashAt: sheet)
        defer { h.cleanUp() }
        let purchase = Task { await h.app().purchase("coins", through: .appStore) }
        while await h.crash.crashed == nil { try await Task.sleep(for: .milliseconds(1)) }
        await h.server.set(unavailable: 1_000)
        let clock = VerdictRuleTests.Clock()
        let relaunched = h.app(now: { clock.now() })
        let waiting = await relaunched.resume()
        #expect(
            waiting.map(\.state) == [.awaitingConfirmation], "the order is still created on the server: not cancelled")
        #expect(h.journalFiles.count == 1)
        await h.server.set(unavailable: 0)
        #expect(await relaunched.resume().map(\.state) == [.awaitingConfirmation], "the store may still deliver")
        clock.advance(by: 601)
        #expect(await relaunched.resume().map(\.state) == [.cancelled])
        #expect(h.journalStages == [.closedWatching], "watched for a late approval, as Ask to Buy's can come")
        #expect(await h.server.orders.values.map(\.status) == [.cancelled])
        clock.advance(by: OrderSafe.askToBuyLapse + 1)
        #expect(await relaunched.resume().isEmpty)
        #expect(h.journalFiles.isEmpty)
        purchase.cancel()
    }

    @Test(
        "App Store: the store charged but the server is unavailable: awaiting confirmation, unfinished, then recorded on resume"
    )
    func appStoreSubmissionDeferred() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        _ = try await app.products()
        await h.server.failSubmissions(3)
        let outcome = await app.purchase("coins", through: .appStore)
        #expect(outcome.state == .awaitingConfirmation)
        #expect(await h.store.finishCount.isEmpty)
        #expect(await h.store.unfinished().count == 1)
        #expect(h.journalFiles.count == 1)
        let resumed = await app.resume()
        #expect(resumed.map(\.state).contains(.awaitingConfirmation), "still failing: kept")
        #expect(await h.store.finishCount.isEmpty)
        await h.server.failSubmissions(0)
        let later = await app.resume()
        #expect(later.map(\.state) == [.fulfilled])
        #expect(await h.store.finishCount == [1001: 1])
        #expect(h.journalFiles.isEmpty)
        #expect(await h.server.balances["user-1"] == 60)
    }

    @Test("App Store: refused by the store before any charge: the order is cancelled, nothing is left")
    func appStoreCancelledOrFailed() async throws {
        for (sheet, expected) in [
            (
                FakeStore.Sheet.fail(.purchase(.productUnavailable)),
                PurchaseOutcome.State.failed(.store(.purchase(.productUnavailable)))
            ),
            (.fail(.storeKit(.userCancelled)), .cancelled),
        ] {
            let h = Harness()
            defer { h.cleanUp() }
            await h.store.set(sheet: sheet)
            let outcome = await h.app().purchase("coins", through: .appStore)
            #expect(outcome.state == expected)
            #expect(await h.server.orders.values.map(\.status) == [.cancelled])
            #expect(h.journalFiles.isEmpty)
        }
    }

    @Test(
        "Ask to Buy: pending with its order kept on disk, then completed through the listener after approval — even after a relaunch"
    )
    func askToBuy() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(sheet: .askToBuy)
        let first = h.app()
        #expect(await first.purchase("coins", through: .appStore).state == .pending)
        #expect(h.journalFiles.count == 1)
        await first.stop()
        // Relaunch; the parent approves while the app runs: the transaction arrives through updates.
        let second = h.app()
        let events = second.events()
        #expect(await second.start().map(\.state) == [.pending])
        await h.store.approveAll()
        let outcome = try await Self.firstFinalOutcome(events)
        #expect(outcome?.state == .fulfilled)
        #expect(outcome?.orderNo == "OS-1", "the approval completed the order made for it")
        #expect(await h.store.finishCount.values.reduce(0, +) == 1)
        #expect(h.journalFiles.isEmpty)
    }

    @Test(
        "a transaction StoreKit cannot verify on the device: the server's verdict decides what is shown, it is never finished, and its redeliveries are neither submitted nor reported again"
    )
    func unverified() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(verifies: false)
        let outcome = await h.app().purchase("coins", through: .appStore)
        #expect(outcome.state == .fulfilled, "the server verified and credited it: \(outcome.name)")
        #expect(await h.store.finishCount.isEmpty)
        #expect(await h.server.credits.count == 1)
        func submissions() async -> Int {
            await h.server.requests.filter { $0.hasSuffix("/appstore/transactions") }.count
        }
        #expect(await submissions() == 1)
        // Every launch meets it again in the store's unfinished transactions: nothing more is asked or shown.
        let relaunched = h.app()
        #expect(await relaunched.resume().isEmpty)
        #expect(await submissions() == 1)
        #expect(await relaunched.isSettled(), "recorded: nothing is on its way")
        #expect(h.journalFiles.count == 1)
        // Once the store no longer lists it, its entry leaves.
        let transaction = try #require(await h.store.unfinished().first)
        #expect(await h.store.finish(transaction))
        _ = await relaunched.resume()
        #expect(h.journalFiles.isEmpty)
    }

    @Test("refusals before any order: payments not allowed, unknown product, channel not offered, no bridge")
    func refusals() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(canPay: false)
        let app = h.app()
        #expect(await app.purchase("coins", through: .appStore).state == .failed(.paymentsNotAllowed))
        #expect(await app.purchase("nothing", through: .appStore).state == .failed(.productNotFound("nothing")))
        #expect(
            await app.purchase("coins", through: .alipay).state
                == .failed(.channelNotOffered(productID: "coins", channel: .alipay)))
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: "https://x.example/")!, token: { "u" }, userID: "u", journalDirectory: h.folder)
        configuration.sleep = { _ in }
        let bare = OrderSafe(configuration: configuration, store: h.store, transport: h.server)
        #expect(await bare.purchase("gift", through: .wechatPay).state == .failed(.bridgeMissing(.wechatPay)))
        #expect(await h.server.orders.isEmpty)
        #expect(h.journalFiles.isEmpty)
    }

    @Test(
        "Alipay and WeChat Pay: the app's word is a hint; the server's confirmation makes it fulfilled; a cancellation cancels"
    )
    func providers() async throws {
        for channel in [Channel.alipay, .wechatPay] {
            for cancelled in [false, true] {
                var h = Harness()
                defer { h.cleanUp() }
                if cancelled {
                    h.vendors.alipayStatus = "6001"
                    h.vendors.wechatCode = -2
                }
                let outcome = await h.app().purchase("gift", through: channel)
                #expect(outcome.state == (cancelled ? .cancelled : .fulfilled), "\(channel) cancelled=\(cancelled)")
                #expect(await h.server.orders.values.map(\.status) == [cancelled ? .cancelled : .fulfilled])
                #expect(h.journalFiles.isEmpty)
            }
        }
    }

    @Test("Alipay 9000 while the server never hears of the payment: awaiting confirmation, kept; never reported paid")
    func providerUnconfirmed() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        h.vendors.alipayStatus = "6004"  // unknown: the app was not paid after all
        let outcome = await h.app().purchase("gift", through: .alipay)
        #expect(outcome.state == .awaitingConfirmation)
        #expect(h.journalFiles.count == 1)
        // At the next launch, the provider still says nothing: the order is closed and the entry removed.
        let resumed = await h.app().resume()
        #expect(resumed.map(\.state) == [.cancelled])
        #expect(h.journalFiles.isEmpty)
    }

    @Test("products: catalog ids merged with the store's details, unknown ids reported, cheapest first")
    func products() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let list = try await h.app().products()
        #expect(list.offers.map(\.id) == ["ghost", "gift", "coins", "vip"])
        #expect(list.unknownToStore == ["unknown.ios"])
        #expect(list.offers.first { $0.id == "ghost" }?.channels == [], "not sold where StoreKit does not know it")
        #expect(list.offers.first { $0.id == "coins" }?.store?.displayPrice == "¥6.00")
        #expect(list.canMakePayments)
    }

    @Test("entitlements: served from the disk cache when the server cannot be reached")
    func entitlementsOffline() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        _ = await h.app().purchase("coins", through: .appStore)
        #expect(try await h.app().entitlements().balances == [Balance(name: "coins", amount: 60)])
        await h.server.set(offline: true)
        #expect(
            try await h.app().entitlements().balances == [Balance(name: "coins", amount: 60)],
            "a new process reads the cache")
        await #expect(throws: OrderSafeError.self) { try await h.app().entitlements(allowCached: false) }
    }

    /// The first final outcome among `events`, or nil after five seconds.
    static func firstFinalOutcome(_ events: AsyncStream<OrderSafeEvent>) async throws -> PurchaseOutcome? {
        try await withThrowingTaskGroup(of: PurchaseOutcome?.self) { group in
            group.addTask {
                for await event in events {
                    if case .purchaseOutcome(let reached) = event, reached.isFinal { return reached }
                }
                return nil
            }
            group.addTask {
                // Only a guard against a hang: the outcome comes in milliseconds, but a loaded CI machine running
                // every suite at once took over 5 s to schedule the listener.
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
