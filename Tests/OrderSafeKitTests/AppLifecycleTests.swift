import Foundation
import OrderSafeModel
import Synchronization
import Testing

@testable import OrderSafeKit

/// The SDK sees the app become active by itself (``AppActivations``): a return from Alipay or WeChat Pay without
/// their answer, and the sweep of what was on its way, need no call from the app (#52 item 3).
@Suite("The app's lifecycle observed by the SDK: no call from the app on its return")
struct AppLifecycleTests {
    /// A payment app of ``ReturnWithoutCallbackTests``, whose app never says it is active; its relay hears it from
    /// OrderSafe (the bridge's `appBecameActive()`), counted.
    struct QuietApp: AlipayBridge, WeChatPayBridge {
        var apps: ReturnWithoutCallbackTests.SilentPaymentApps
        /// The one payment app this bridge is for (an app has one bridge per provider).
        var channel: Channel
        let told: Counter

        func pay(orderString: String) async -> AlipayResult { await apps.pay(orderString: orderString) }
        func pay(_ request: WeChatPayRequest) async -> WeChatPayResult { await apps.pay(request) }

        func appBecameActive() async {
            told.count.withLock { $0 += 1 }
            switch channel {
            case .alipay: await apps.alipay.appBecameActive(grace: 0.02)
            default: await apps.wechat.appBecameActive(grace: 0.02)
            }
        }
    }

    final class Counter: Sendable {
        let count = Mutex(0)
    }

    static let becameActive = Notification.Name("ordersafe.test.becameActive")

    /// Five minutes for the payment app's answer: a purchase that never hears the app become active waits them out.
    static let patient = ConfirmationPolicy(firstDelay: 0.001, maxDelay: 0.002, timeout: 0.02, providerAnswer: 300)

    /// An app on `h` whose activations are `becameActive` posted to `center` (the platform's notification, here a
    /// center of the test's own), or none.
    static func app(
        _ h: Harness, _ apps: ReturnWithoutCallbackTests.SilentPaymentApps, told: Counter = Counter(),
        center: NotificationCenter?
    ) -> OrderSafe {
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: "https://pay.example.com/")!, token: { "user-1" }, userID: "user-1",
            journalDirectory: h.folder, alipay: QuietApp(apps: apps, channel: .alipay, told: told),
            wechatPay: QuietApp(apps: apps, channel: .wechatPay, told: told), confirmation: Self.patient)
        configuration.sleep = { _ in await Task.yield() }
        configuration.activations =
            center.map { AppActivations.notifications(named: Self.becameActive, center: $0) } ?? .none
        return OrderSafe(configuration: configuration, store: h.store, transport: h.server)
    }

    /// Posts the activation every 10 ms while `work` runs: the buyer back in the app, as often as it takes.
    static func activating<T: Sendable>(_ center: NotificationCenter, while work: @escaping @Sendable () async -> T)
        async -> T
    {
        let running = Task { await work() }
        let poster = Task {
            while !Task.isCancelled {
                center.post(name: Self.becameActive, object: nil)
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        let value = await running.value
        poster.cancel()
        return value
    }

    @Test(
        "paid, back by the app switcher, the app calling nothing: OrderSafe sees it active and asks the server",
        .timeLimit(.minutes(1)), arguments: [Channel.alipay, .wechatPay])
    func returnObserved(channel: Channel) async throws {
        let h = Harness()
        defer { h.cleanUp() }
        var apps = ReturnWithoutCallbackTests.SilentPaymentApps(server: h.server)
        apps.returns = false
        let told = Counter()
        let center = NotificationCenter()
        let app = Self.app(h, apps, told: told, center: center)
        await app.start()
        let outcome = await Self.activating(center) {
            await BoundedAnswer.within(30) { await app.purchase("gift", through: channel) }
        }
        #expect(outcome?.state == .fulfilled, "\(outcome?.name ?? "still waiting after 30 s")")
        #expect(await h.server.balances["user-1"] == 60)
        #expect(told.count.withLock { $0 } > 0)
        await app.stop()
    }

    @Test(
        "what was on its way when the buyer left is settled on the return, unasked: the sweep runs on the activation",
        .timeLimit(.minutes(1)))
    func sweepObserved() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        var apps = ReturnWithoutCallbackTests.SilentPaymentApps(server: h.server)
        apps.pays = false
        let center = NotificationCenter()
        let app = Self.app(h, apps, center: center)
        await app.start()
        let outcome = await Self.activating(center) { await app.purchase("gift", through: .alipay) }
        #expect(outcome.state == .awaitingConfirmation, "\(outcome.name)")
        let orderNo = try #require(outcome.orderNo)
        await h.server.pay(orderNo: orderNo)  // paid after all, while the buyer was away
        let events = app.events()
        center.post(name: Self.becameActive, object: nil)
        let settled = await BoundedAnswer.within(30) { () async -> PurchaseOutcome? in
            for await event in events {
                if case .purchaseOutcome(let later) = event, later.orderNo == orderNo { return later }
            }
            return nil
        }
        #expect(settled??.state == .fulfilled)
        #expect(h.journalFiles.isEmpty, "settled and gone from the journal")
        await app.stop()
    }

    @Test(
        "opted out (AppActivations.none): nothing is observed — the bridges are never told, the app's own call does it",
        .timeLimit(.minutes(1)))
    func optedOut() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        var apps = ReturnWithoutCallbackTests.SilentPaymentApps(server: h.server)
        apps.returns = false
        let told = Counter()
        let center = NotificationCenter()
        let app = Self.app(h, apps, told: told, center: nil)
        await app.start()
        let purchase = Task { await app.purchase("gift", through: .wechatPay) }
        for _ in 0..<20 {
            center.post(name: Self.becameActive, object: nil)
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(told.count.withLock { $0 } == 0, "nothing observed")
        // The app says it itself.
        let outcome = await BoundedAnswer.within(30) {
            while true {
                await app.appBecameActive()
                if let done = await BoundedAnswer.within(0.2, { await purchase.value }) { return done }
            }
        }
        #expect(outcome?.state == .fulfilled, "\(outcome?.name ?? "still waiting")")
        await app.stop()
    }
}
