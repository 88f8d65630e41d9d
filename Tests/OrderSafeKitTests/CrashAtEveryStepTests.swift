import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// The app is killed at every step of a purchase in turn (before and after each server call is processed, before
/// and after the store charges, before and after the payment app pays), then launched again. After the relaunch
/// settles: every charge is credited exactly once, every transaction is finished, nothing is left in the journal.
@Suite("Crash at every step")
struct CrashAtEveryStepTests {
    @Test("killed at each step of a purchase, then relaunched", arguments: [Channel.appStore, .alipay, .wechatPay])
    func killedAtEveryStep(channel: Channel) async throws {
        let product = channel == .appStore ? "coins" : "gift"
        var step = 0
        var crashes: [String] = []
        while true {
            let h = Harness(crashAt: step)
            defer { h.cleanUp() }
            let purchase = Task { await h.app().purchase(product, through: channel) }
            // Either the purchase reaches its crash point (and hangs there, as a killed process would), or it
            // completes: then every step was covered.
            var completed = false
            for _ in 0..<2000 {
                if await h.crash.crashed != nil { break }
                if await h.crash.steps.count > step + 1 {
                    completed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            if !completed, await h.crash.crashed == nil {
                _ = await purchase.value
                completed = true
            }
            if completed { break }
            crashes.append(await h.crash.crashed ?? "?")
            // Launch again (same folder, store queue and server); resume until settled, the clock moving past the
            // store's delivery window (an App Store purchase killed while the store had it waits for it).
            let clock = VerdictRuleTests.Clock()
            let relaunched = h.app(now: { clock.now() })
            await relaunched.start()
            for _ in 0..<20 where !(await relaunched.isSettled()) {
                clock.advance(by: 601)
                await relaunched.resume()
            }
            // A closed order is watched for as long as Ask to Buy can answer (a kill may have lost its `.pending`).
            #expect(
                h.journalStages.allSatisfy { $0 == .closedWatching }, "step \(step): \(h.journalStages) left")
            clock.advance(by: OrderSafe.askToBuyLapse + 1)
            await relaunched.resume()
            await relaunched.stop()
            let charged = await h.store.charged.map { String($0.id) }
            let paidOrders = await h.server.providerPaid
            let credits = await h.server.credits
            #expect(await relaunched.isSettled(), "step \(step) (\(crashes.last!)): not settled")
            #expect(await h.store.unfinished().isEmpty, "step \(step): unfinished transactions left")
            #expect(h.journalFiles.isEmpty, "step \(step): journal entries left")
            #expect(await h.server.doubleCredits == 0, "step \(step): credited twice")
            for id in charged { #expect(credits[id] != nil, "step \(step) (\(crashes.last!)): transaction \(id) lost") }
            for orderNo in paidOrders {
                #expect(credits["provider:\(orderNo)"] != nil, "step \(step): paid order \(orderNo) lost")
            }
            #expect(await h.server.balances["user-1", default: 0] == Int64(60 * (charged.count + paidOrders.count)))
            purchase.cancel()
            step += 1
        }
        #expect(crashes.count >= (channel == .appStore ? 8 : 10), "the purchase has this many steps: \(crashes)")
    }

    @Test(
        "killed at each step, relaunched with another user signed in, then by the buyer",
        arguments: [Channel.appStore, .alipay, .wechatPay])
    func killedThenAnotherUser(channel: Channel) async throws {
        let product = channel == .appStore ? "coins" : "gift"
        var step = 0
        while true {
            let h = Harness(crashAt: step)
            defer { h.cleanUp() }
            let purchase = Task { await h.app().purchase(product, through: channel) }
            var crashed = false
            for _ in 0..<2000 {
                if await h.crash.crashed != nil {
                    crashed = true
                    break
                }
                if await h.crash.steps.count > step + 1 { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            if !crashed, await h.crash.crashed == nil { _ = await purchase.value }
            guard crashed else { break }
            let point = await h.crash.crashed ?? "?"
            let buyersOrders = Set(await h.server.orders.values.filter { $0.userID == "user-1" }.map(\.orderNo))
            // Another user signs in on the same phone and launches the app.
            var other = h
            other.user = "user-2"
            let second = other.app()
            var shown = await second.start()
            for _ in 0..<20 where !(await second.isSettled()) { shown += await second.resume() }
            await second.stop()
            #expect(await second.isSettled(), "step \(step) (\(point)): another user's launch never settles")
            // Kept only for the buyer's next launch: what the store charged and the server recorded for them.
            let forTheBuyer = h.journalStages
            #expect(
                forTheBuyer.allSatisfy { $0 == .recordedForOwner },
                "step \(step) (\(point)): entries that can never settle here are kept: \(forTheBuyer)")
            let orders = await h.server.orders
            for outcome in shown {
                guard let orderNo = outcome.orderNo, buyersOrders.contains(orderNo) else { continue }
                // Only a StoreKit transaction the store delivers to whoever is signed in may name the buyer's order
                // (the server credits its owner); nothing else of the buyer's is shown to this user.
                #expect(
                    channel == .appStore && outcome.state == .fulfilled,
                    "step \(step) (\(point)): \(outcome.name) of the buyer's order shown")
                if let settled = orders[orderNo].flatMap(PurchaseOutcome.settled) {
                    #expect(
                        settled.state == outcome.state,
                        "step \(step) (\(point)): \(outcome.name) while the server says \(settled.name)")
                }
            }
            // The providers' notifications reach the server; the buyer signs in again: everything they paid for is
            // theirs, once.
            await h.server.deliverProviderNotifications()
            let first = h.app()
            var told = await first.start()
            for _ in 0..<20 where !(await first.isSettled()) { told += await first.resume() }
            await first.stop()
            #expect(
                told.filter { $0.state == .fulfilled }.count >= forTheBuyer.count,
                "step \(step) (\(point)): the buyer is told what was recorded for them: \(told.map(\.name))")
            #expect(h.journalFiles.isEmpty, "step \(step) (\(point)): journal entries left")
            let charged = await h.store.charged.map { String($0.id) }
            let paidOrders = await h.server.providerPaid
            let credits = await h.server.credits
            #expect(await h.store.unfinished().isEmpty, "step \(step) (\(point)): unfinished transactions left")
            #expect(await h.server.doubleCredits == 0, "step \(step): credited twice")
            for id in charged { #expect(credits[id] != nil, "step \(step) (\(point)): transaction \(id) lost") }
            for orderNo in paidOrders {
                #expect(credits["provider:\(orderNo)"] != nil, "step \(step) (\(point)): paid order \(orderNo) lost")
            }
            #expect(await h.server.balances["user-1", default: 0] == Int64(60 * (charged.count + paidOrders.count)))
            #expect(
                await h.server.balances["user-2", default: 0] == 0,
                "step \(step) (\(point)): credited to the other user")
            purchase.cancel()
            step += 1
        }
        #expect(step >= (channel == .appStore ? 8 : 10), "the purchase has this many steps")
    }
}
