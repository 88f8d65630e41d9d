import Foundation
import OrderSafeModel
import Synchronization
import Testing

@testable import OrderSafeKit

/// What a purchase reports is true: a provider's failure is a failure with its reason, unpaid is not "received", and
/// a charge the store made is never reported as failed.
@Suite("True outcomes")
struct TrueOutcomesTests {
    @Test(
        "Alipay 4000 and WeChat Pay −1, −3 (not sent: WeChat missing) are failures with the provider's reason, not cancellations"
    )
    func providerFailures() async throws {
        for (channel, alipay, wechat) in [
            (Channel.alipay, "4000", Int32(0)), (.wechatPay, "9000", -3), (.wechatPay, "9000", -1),
        ] {
            var h = Harness()
            defer { h.cleanUp() }
            h.vendors.alipayStatus = alipay
            h.vendors.wechatCode = wechat
            let outcome = await h.app().purchase("gift", through: channel)
            let expected: OrderSafeError =
                channel == .alipay
                ? .alipay(AlipayResult(resultStatus: alipay)) : .wechatPay(WeChatPayResult(errCode: wechat))
            #expect(outcome.state == .failed(expected), "\(channel) \(alipay) \(wechat): \(outcome.name)")
            #expect(outcome.message(in: .english) != Messages.text("outcome.cancelled", .english))
            #expect(
                await h.server.orders.values.map(\.status) == [.cancelled], "the unpaid order is closed all the same")
            #expect(h.journalFiles.isEmpty)
        }
    }

    @Test(
        "waiting on a provider nobody has confirmed says nothing was received; waiting after the App Store charged says so"
    )
    func awaitingSaysWhatIsKnown() async throws {
        var h = Harness()
        defer { h.cleanUp() }
        h.vendors.alipayStatus = "6004"
        let unknown = await h.app().purchase("gift", through: .alipay)
        #expect(unknown.state == .awaitingConfirmation && !unknown.storeMayHaveCharged)
        #expect(
            !unknown.message(in: .english).contains("App Store") && !unknown.message(in: .english).contains("received"))

        let charged = Harness()
        defer { charged.cleanUp() }
        await charged.server.failSubmissions(1)
        let waiting = await charged.app().purchase("coins", through: .appStore)
        #expect(waiting.state == .awaitingConfirmation && waiting.storeMayHaveCharged)
        #expect(waiting.message(in: .english).contains("App Store"))
    }

    @Test(
        "a store error after the charge (Confirmation required) is never reported as failed nor the order cancelled; the transaction is credited when it comes"
    )
    func errorAfterCharge() async throws {
        for failure in [
            StoreFailure.skError(0), .storeKit(.systemError), .storeKit(.networkError), .storeKit(.unknown),
        ] {
            let h = Harness()
            defer { h.cleanUp() }
            await h.store.set(sheet: .failAfterCharge(failure))
            let app = h.app()
            let outcome = await app.purchase("coins", through: .appStore)
            #expect(
                outcome.state == .awaitingConfirmation && outcome.storeMayHaveCharged, "\(failure): \(outcome.name)")
            #expect(
                await h.server.orders.values.map(\.status) == [.created],
                "\(failure): the order is kept for its transaction")
            let resumed = await app.resume()
            #expect(resumed.contains { $0.state == .fulfilled }, "\(failure): \(resumed.map(\.name))")
            #expect(await h.server.balances["user-1"] == 60)
            #expect(await h.server.doubleCredits == 0)
            #expect(await h.store.unfinished().isEmpty && h.journalFiles.isEmpty)
        }
    }

    @Test(
        "a store error that came before any charge after all: the order is kept ten minutes for its transaction, then given up (and watched, as long as Ask to Buy can answer, without a word)"
    )
    func errorWithoutCharge() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let clock = VerdictRuleTests.Clock()
        let app = h.app(now: { clock.now() })
        await h.store.set(sheet: .fail(.storeKit(.systemError)))
        #expect(await app.purchase("coins", through: .appStore).state == .awaitingConfirmation)
        clock.advance(by: 599)
        #expect(await app.resume().map(\.state) == [.awaitingConfirmation])
        #expect(await h.server.orders.values.map(\.status) == [.created])
        clock.advance(by: 2)
        #expect(await app.resume().map(\.state) == [.cancelled])
        #expect(h.journalStages == [.closedWatching], "a transaction later still is told to its buyer")
        clock.advance(by: OrderSafe.askToBuyLapse + 1)
        #expect(await app.resume().isEmpty)
        #expect(h.journalFiles.isEmpty)
    }

    @Test(
        "after the App Store charged, a refusal of the server (401 expired token, 403, 409 unknown product or unbound) is awaiting confirmation, never failed: the transaction stays unfinished and is recorded once the server takes it"
    )
    func refusedAfterCharge() async throws {
        for (status, code) in [
            (401, "unauthorized"), (403, "forbidden"), (409, "unknown_app_store_product"), (409, "unbound_transaction"),
        ] {
            let h = Harness()
            defer { h.cleanUp() }
            let clock = VerdictRuleTests.Clock()
            let app = h.app(now: { clock.now() })
            await h.server.set(submissionAnswer: { _ in
                (status, #"{"error":{"code":"\#(code)","message":"not now"}}"#)
            })
            let outcome = await app.purchase("coins", through: .appStore)
            #expect(
                outcome.state == .awaitingConfirmation && outcome.storeMayHaveCharged,
                "\(status) \(code): \(outcome.name)")
            #expect(await h.store.unfinished().count == 1, "\(code): never finished unrecorded")
            #expect(await h.server.orders.values.map(\.status) == [.created], "\(code): the order is kept")
            await h.server.set(submissionAnswer: nil)
            let waiting = await app.resume().map(\.state)
            #expect(
                waiting.allSatisfy { $0 == .awaitingConfirmation || $0 == .underReview } && !waiting.isEmpty,
                "\(code): it waits its turn, never failed nor cancelled: \(waiting)")
            clock.advance(by: 3600)
            let resumed = await app.resume()
            #expect(resumed.contains { $0.state == .fulfilled }, "\(code): \(resumed.map(\.name))")
            #expect(await h.server.balances["user-1"] == 60)
            #expect(await h.server.doubleCredits == 0)
            #expect(await h.store.unfinished().isEmpty && h.journalFiles.isEmpty)
        }
    }

    @Test(
        "cancelled on the sheet: told at once; the order is kept for the store's delivery window (a transaction that still comes is credited), then closed with nothing more said"
    )
    func cancelledOnTheSheet() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let clock = VerdictRuleTests.Clock()
        let app = h.app(now: { clock.now() })
        await h.store.set(sheet: .cancel)
        #expect(await app.purchase("coins", through: .appStore).state == .cancelled)
        #expect(await h.server.orders.values.map(\.status) == [.created], "kept for a late transaction")
        #expect(await app.resume().isEmpty, "nothing more is said while it waits")
        clock.advance(by: 601)
        #expect(await app.resume().isEmpty, "closed without a second 'cancelled'")
        #expect(await h.server.orders.values.map(\.status) == [.cancelled])
        #expect(h.journalFiles.isEmpty)
    }

    /// An App Store purchase killed as StoreKit answered Ask to Buy's `.pending`, before the app wrote it down: its
    /// harness (to clean up), its pinned clock, and the killed purchase (to cancel).
    static func killedAskingAParent() async throws -> (Harness, VerdictRuleTests.Clock, Task<PurchaseOutcome, Never>) {
        let rehearsal = Harness()
        defer { rehearsal.cleanUp() }
        await rehearsal.store.set(sheet: .askToBuy)
        _ = await rehearsal.app().purchase("coins", through: .appStore)
        let asked = try #require(await rehearsal.crash.steps.firstIndex(of: "store: asked a parent"))

        let h = Harness(crashAt: asked)
        await h.store.set(sheet: .askToBuy)
        let clock = VerdictRuleTests.Clock()
        let buyer = h.app(now: { clock.now() })
        let killed = Task { await buyer.purchase("coins", through: .appStore) }
        for _ in 0..<2000 where await h.crash.crashed == nil { try await Task.sleep(for: .milliseconds(1)) }
        #expect(await h.crash.crashed == "store: asked a parent")
        return (h, clock, killed)
    }

    @Test(
        "killed once StoreKit had the purchase (Ask to Buy's pending not yet written down): the relaunch says it waits, never cancelled; a parent's approval within the store's window completes the order, and none closes it after",
        arguments: [true, false])
    func killedWhileTheStoreHadIt(approved: Bool) async throws {
        let (h, clock, killed) = try await Self.killedAskingAParent()
        defer { h.cleanUp() }
        defer { killed.cancel() }

        let relaunched = h.app(now: { clock.now() })
        let events = relaunched.events()
        let shown = await relaunched.start()
        #expect(
            shown.map(\.state) == [.awaitingConfirmation] && shown.allSatisfy(\.storeMayHaveCharged),
            "the store may still deliver: \(shown.map(\.name))")
        #expect(await h.server.orders.values.map(\.status) == [.created], "kept for the store's delivery window")
        if approved {
            await h.store.approveAll()
            let outcome = try await PurchaseMachineTests.firstFinalOutcome(events)
            #expect(outcome?.state == .fulfilled && outcome?.orderNo == "OS-1", "\(outcome?.name ?? "none")")
            #expect(await h.server.balances["user-1"] == 60)
        } else {
            clock.advance(by: 601)
            #expect(await relaunched.resume().map(\.state) == [.cancelled])
            #expect(await h.server.orders.values.map(\.status) == [.cancelled])
            #expect(h.journalStages == [.closedWatching])
            clock.advance(by: OrderSafe.askToBuyLapse + 1)
            #expect(await relaunched.resume().isEmpty)
        }
        await relaunched.stop()
        #expect(h.journalFiles.isEmpty)
    }

    @Test(
        "a parent's approval after the kill's order was closed reaches its buyer: at once if they are signed in, else at their next launch, never left at cancelled (device-chaos 10,000 seed 12)",
        arguments: ["user-1", "user-2"])
    func lateApprovalReachesItsBuyer(signedInAtApproval: String) async throws {
        let (killedHarness, clock, killed) = try await Self.killedAskingAParent()
        var h = killedHarness
        defer { h.cleanUp() }
        defer { killed.cancel() }
        _ = await h.app(now: { clock.now() }).start()
        clock.advance(by: 601)
        #expect(await h.app(now: { clock.now() }).resume().map(\.state) == [.cancelled], "the window is over")

        // Hours later a parent approves; the transaction reaches whichever user has the phone.
        clock.advance(by: 3 * 3600)
        await h.store.approveAll()
        h.user = signedInAtApproval
        let atApproval = await h.app(now: { clock.now() }).start()
        #expect(await h.server.balances["user-1"] == 60, "credited to the buyer, whoever submitted it")
        let told: [PurchaseOutcome]
        if signedInAtApproval == "user-1" {
            told = atApproval
        } else {
            #expect(atApproval.isEmpty, "none of it shown to user-2: \(atApproval.map(\.name))")
            #expect(await h.app(now: { clock.now() }).isSettled(), "nothing on its way for user-2")
            h.user = "user-1"
            told = await h.app(now: { clock.now() }).start()
        }
        #expect(told.map(\.state) == [.fulfilled], "the buyer hears that it was paid: \(told.map(\.name))")
        #expect(await h.store.unfinished().isEmpty && h.journalFiles.isEmpty)
    }

    @Test(
        "an order closed after a kill is watched for a late approval only as long as Ask to Buy can answer: after three days it leaves the journal without a word"
    )
    func closedOrderWatchLapses() async throws {
        let (h, clock, killed) = try await Self.killedAskingAParent()
        defer { h.cleanUp() }
        defer { killed.cancel() }
        let app = h.app(now: { clock.now() })
        _ = await app.start()
        clock.advance(by: 601)
        #expect(await app.resume().map(\.state) == [.cancelled])
        #expect(await app.isSettled(), "a closed order watched is nothing on its way")
        #expect(await app.resume().isEmpty, "told once")
        clock.advance(by: 3 * 86400 + 1)
        #expect(await app.resume().isEmpty)
        #expect(h.journalFiles.isEmpty)
    }

    @Test(
        "StoreKit charged and answered userCancelled (iOS 18): the transaction carrying the order's token is found and credited, never reported cancelled"
    )
    func chargedThenCancelled() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.store.set(sheet: .cancelAfterCharge)
        let outcome = await h.app().purchase("coins", through: .appStore)
        #expect(outcome.state == .fulfilled, "\(outcome.name)")
        #expect(await h.server.balances["user-1"] == 60)
        #expect(await h.server.doubleCredits == 0)
        #expect(await h.store.unfinished().isEmpty && h.journalFiles.isEmpty)
    }

    @Test(
        "back from Alipay or WeChat Pay, a 401 of the server (the app's token expired) is awaiting confirmation, never failed; the payment is reported once the server can say"
    )
    func providerPaidThenUnauthorized() async throws {
        for channel in [Channel.alipay, .wechatPay] {
            var h = Harness()
            defer { h.cleanUp() }
            h.vendors.alipayStatus = "9000"
            h.vendors.wechatCode = 0
            let app = h.app()
            await h.server.set(unauthorizedClientResults: 1)
            let outcome = await app.purchase("gift", through: channel)
            #expect(outcome.state == .awaitingConfirmation, "\(channel): \(outcome.name)")
            #expect(!h.journalFiles.isEmpty, "\(channel): kept until the server can say")
            let resumed = await app.resume()
            #expect(resumed.map(\.state) == [.fulfilled], "\(channel): \(resumed.map(\.name))")
            #expect(h.journalFiles.isEmpty)
        }
    }

    @Test(
        "an app token that expired while the buyer paid is refreshed through the app's callback: the charge is recorded at once, on every channel"
    )
    func expiredTokenRefreshed() async throws {
        for channel in [Channel.appStore, .alipay, .wechatPay] {
            var h = Harness()
            defer { h.cleanUp() }
            h.vendors.alipayStatus = "9000"
            h.vendors.wechatCode = 0
            let refreshed = Mutex<[String]>([])
            var configuration = OrderSafeConfiguration(
                serverURL: URL(string: "https://pay.example.com/")!, token: { "user-1" }, userID: "user-1",
                journalDirectory: h.folder, alipay: h.vendors, wechatPay: h.vendors,
                confirmation: ConfirmationPolicy(firstDelay: 0.001, maxDelay: 0.002, timeout: 0.02))
            configuration.sleep = { _ in await Task.yield() }
            configuration.refreshToken = { refused in
                refreshed.withLock { $0.append(refused) }
                return "user-1~2"  // the same user's new token
            }
            let app = OrderSafe(configuration: configuration, store: h.store, transport: h.server)
            if channel == .appStore {
                await h.server.set(unauthorizedSubmissions: 1)
            } else {
                await h.server.set(unauthorizedClientResults: 1)
            }
            let outcome = await app.purchase(channel == .appStore ? "coins" : "gift", through: channel)
            #expect(outcome.state == .fulfilled, "\(channel): \(outcome.name)")
            #expect(refreshed.withLock { $0 } == ["user-1"], "\(channel): asked once, with the refused token")
            #expect(h.journalFiles.isEmpty, "\(channel)")
        }
    }

    @Test("the app's refresh is asked once per refused token, however many calls were refused with it at once")
    func oneRefreshPerRefusedToken() async throws {
        let asked = Mutex(0)
        let refresh = TokenRefresh { refused in
            asked.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(20))
            return refused + "+"
        }
        let fresh = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<20 { group.addTask { try? await refresh.fresh(after: "old") } }
            return await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(fresh == ["old+"] && asked.withLock { $0 } == 1)
        #expect(try await refresh.fresh(after: "old+") == "old++" && asked.withLock { $0 } == 2)
    }

    @Test("a refresh that failed is asked again at the next refusal, not remembered")
    func failedRefreshAskedAgain() async throws {
        struct Offline: Error {}
        let asked = Mutex(0)
        let refresh = TokenRefresh { refused in
            let attempt = asked.withLock {
                $0 += 1
                return $0
            }
            if attempt == 1 { throw Offline() }
            return refused + "+"
        }
        await #expect(throws: Offline.self) { try await refresh.fresh(after: "old") }
        #expect(try await refresh.fresh(after: "old") == "old+" && asked.withLock { $0 } == 2)
    }

    @Test("refusals before any charge still fail at once and close the order")
    func refusalsBeforeCharge() async throws {
        for failure in [
            StoreFailure.purchase(.purchaseNotAllowed), .storeKit(.notAvailableInStorefront),
            .purchase(.productUnavailable), .lookup(.networkError),
        ] {
            let h = Harness()
            defer { h.cleanUp() }
            await h.store.set(sheet: .fail(failure))
            let outcome = await h.app().purchase("coins", through: .appStore)
            #expect(outcome.state == .failed(.store(failure)), "\(failure)")
            #expect(await h.server.orders.values.map(\.status) == [.cancelled])
        }
    }

    @Test("a transaction the store no longer holds unfinished when it is recorded: recorded, and no finish claimed")
    func finishNotAssumed() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.server.set(submissionDelay: .milliseconds(200))
        let app = h.app()
        let events = app.events()
        let buying = Task { await app.purchase("coins", through: .appStore) }
        try await Task.sleep(for: .milliseconds(80))
        for transaction in await h.store.unfinished() { await h.store.finishedElsewhere(transaction.id) }
        #expect(await buying.value.state == .fulfilled)
        await app.stop()
        var finished = 0
        for await event in events { if case .transactionFinished = event { finished += 1 } }
        #expect(finished == 0, "the store finished nothing: no transactionFinished is claimed")
        #expect(h.journalFiles.isEmpty, "recorded by the server: nothing left on its way")
        #expect(await h.store.finishCount.isEmpty)
    }
}

/// A second tap on the Buy button while the first purchase is on its way: one order, one charge.
@Suite("One purchase per user and product at a time")
struct OnePurchaseAtATimeTests {
    @Test("two taps at once make one order and one charge; the second hears the purchase is on its way")
    func doubleTap() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        async let first = app.purchase("coins", through: .appStore)
        async let second = app.purchase("coins", through: .appStore)
        let outcomes = await [first, second]
        #expect(outcomes.filter { $0.state == .fulfilled }.count == 1, "\(outcomes.map(\.name))")
        #expect(outcomes.filter { $0.state == .failed(.purchaseInProgress("coins")) }.count == 1)
        #expect(await h.server.orders.count == 1)
        #expect(await h.store.charged.count == 1)
        // Once it ended, the next purchase of the product goes ahead.
        #expect(await app.purchase("coins", through: .appStore).state == .fulfilled)
        #expect(await h.server.orders.count == 2)
        #expect(
            OrderSafeError.purchaseInProgress("coins").message(in: .simplifiedChinese).contains("进行中")
                && OrderSafeError.purchaseInProgress("coins").message(in: .english).contains("already"))
    }
}
