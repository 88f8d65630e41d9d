import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// Coming back from Alipay or WeChat without their answer: by the app switcher, the status bar's back link, or a
/// payment app that crashed. The purchase never waits forever.
@Suite("Return without a callback: the purchase asks the server and returns")
struct ReturnWithoutCallbackTests {
    /// A payment app that pays (or not) and never calls back; the buyer comes back on their own.
    struct SilentPaymentApps: AlipayBridge, WeChatPayBridge {
        let server: FakeServer
        let alipay = PaymentResultRelay<AlipayResult>()
        let wechat = PaymentResultRelay<WeChatPayResult>()
        var pays = true
        /// The buyer comes back and the app says so; false: not even that (the app never sees itself active).
        var returns = true

        func pay(orderString: String) async -> AlipayResult {
            let orderNo = String(orderString.dropFirst("out_trade_no=".count))
            return await alipay.wait(superseded: AlipayResult(resultStatus: "6001")) { [self] in
                Task {
                    if pays { await server.pay(orderNo: orderNo) }
                    if returns { await alipay.appBecameActive(grace: 0.02) }
                }
            }
        }

        func pay(_ request: WeChatPayRequest) async -> WeChatPayResult {
            let orderNo = String(request.prepayID.dropFirst("prepay-".count))
            return await wechat.wait(superseded: WeChatPayResult(errCode: -2)) { [self] in
                Task {
                    if pays { await server.pay(orderNo: orderNo) }
                    if returns { await wechat.appBecameActive(grace: 0.02) }
                }
            }
        }
    }

    static func app(_ h: Harness, _ apps: SilentPaymentApps, providerAnswer: TimeInterval = 300) -> OrderSafe {
        app(
            h, alipay: apps, wechatPay: apps,
            confirmation: ConfirmationPolicy(
                firstDelay: 0.001, maxDelay: 0.002, timeout: 0.02, providerAnswer: providerAnswer))
    }

    /// Polls as an app does (a second, doubling to five, for 20 s), on a clock that does not sleep: long enough for
    /// the server to ask the provider again.
    static let appPolicy = ConfirmationPolicy(firstDelay: 1, maxDelay: 5, timeout: 20, providerAnswer: 300)

    static func app(
        _ h: Harness, alipay: any AlipayBridge, wechatPay: any WeChatPayBridge, confirmation: ConfirmationPolicy
    ) -> OrderSafe {
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: "https://pay.example.com/")!, token: { "user-1" }, userID: "user-1",
            journalDirectory: h.folder, alipay: alipay, wechatPay: wechatPay, confirmation: confirmation)
        configuration.sleep = { _ in await Task.yield() }
        return OrderSafe(configuration: configuration, store: h.store, transport: h.server)
    }

    @Test(
        "paid, back by the app switcher: the server's word makes it fulfilled", .timeLimit(.minutes(1)),
        arguments: [Channel.alipay, .wechatPay])
    func paidWithoutCallback(channel: Channel) async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let outcome = await Self.app(h, SilentPaymentApps(server: h.server)).purchase("gift", through: channel)
        #expect(outcome.state == .fulfilled, "\(outcome.name)")
        #expect(await h.server.balances["user-1"] == 60)
    }

    @Test(
        "not paid, back without a callback: awaiting confirmation, then closed by a later resume",
        .timeLimit(.minutes(1)))
    func unpaidWithoutCallback() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        var apps = SilentPaymentApps(server: h.server)
        apps.pays = false
        let app = Self.app(h, apps)
        let outcome = await app.purchase("gift", through: .alipay)
        #expect(outcome.state == .awaitingConfirmation, "\(outcome.name)")
        let later = await app.resume()
        #expect(later.map(\.state) == [.cancelled], "\(later.map(\.name))")
    }

    @Test(
        "not paid, back by the app switcher, the provider saying so twice: told \"not paid\" (not \"awaiting\"); the order stays open, and paid after all it is credited and reported",
        .timeLimit(.minutes(1)), arguments: [Channel.alipay, .wechatPay])
    func providerSaysNotPaid(channel: Channel) async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.server.set(asksProvider: true)
        var apps = SilentPaymentApps(server: h.server)
        apps.pays = false
        let app = Self.app(h, alipay: apps, wechatPay: apps, confirmation: Self.appPolicy)
        let outcome = await app.purchase("gift", through: channel)
        #expect(outcome.state == .notPaid, "\(outcome.name)")
        #expect(outcome.name == "not_paid" && !outcome.isFinal)
        #expect(outcome.message(in: .english).hasPrefix("Not paid"))
        let asked = await h.server.requests.filter { $0.hasSuffix("/client-result") }.count
        #expect(asked == 2, "the provider's word at the return, and once more seconds later")
        let orderNo = try #require(outcome.orderNo)
        #expect(await h.server.orders[orderNo]?.status == .created, "the order stays open")
        #expect(h.journalFiles.count == 1, "kept: a late payment is still reported")

        await h.server.pay(orderNo: orderNo)
        let later = await app.resume()
        #expect(later.map(\.state) == [.fulfilled], "\(later.map(\.name))")
        #expect(await h.server.balances["user-1"] == 60)
    }

    @Test(
        "paid at last, after the server was restored from a backup older than the order: the phone's next report names the channel, the server rebuilds the order from the provider, and it is reported fulfilled, credited once",
        .timeLimit(.minutes(1)), arguments: [Channel.alipay, .wechatPay])
    func orderTheServerLost(channel: Channel) async throws {
        let h = Harness()
        defer { h.cleanUp() }
        var apps = SilentPaymentApps(server: h.server)
        apps.pays = false
        let app = Self.app(h, apps)
        let outcome = await app.purchase("gift", through: channel)
        #expect(outcome.state == .awaitingConfirmation, "\(outcome.name)")
        await h.server.pay(orderNo: try #require(outcome.orderNo))
        await h.server.loseOrders()
        let later = await app.resume()
        #expect(later.map(\.state) == [.fulfilled], "\(later.map(\.name))")
        #expect(await h.server.balances["user-1"] == 60 && h.journalFiles.isEmpty)
        #expect(await h.server.doubleCredits == 0)
    }

    @Test(
        "the provider's app said it paid: its word is not overruled by one \"not paid\"; awaiting confirmation",
        .timeLimit(.minutes(1)))
    func successHintNeverNotPaid() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        await h.server.set(asksProvider: true)
        let apps = ReturnWithoutCallbackTests.SilentPaymentApps(server: h.server)
        let app = Self.app(h, alipay: SuccessWithoutPayment(), wechatPay: apps, confirmation: Self.appPolicy)
        let outcome = await app.purchase("gift", through: .alipay)
        #expect(outcome.state == .awaitingConfirmation, "\(outcome.name)")
    }

    /// Alipay's SDK answering 9000 for a payment the provider never got (its word is a hint only).
    struct SuccessWithoutPayment: AlipayBridge {
        func pay(orderString: String) async -> AlipayResult { AlipayResult(resultStatus: "9000") }
    }

    @Test(
        "a payment app that never answers and an app never told it is active: the purchase still returns after its bound",
        .timeLimit(.minutes(1)))
    func boundedWait() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        var apps = SilentPaymentApps(server: h.server)
        apps.returns = false
        let app = Self.app(h, apps, providerAnswer: 0.2)
        // Bounded here too, generously (a loaded CI machine took 5.7 s), so that a purchase that never returns fails
        // this test instead of hanging the run.
        let outcome = await BoundedAnswer.within(60) { await app.purchase("gift", through: .wechatPay) }
        #expect(outcome?.state == .fulfilled, "paid all along: \(outcome?.name ?? "no outcome within 60 s")")
        // The payment app's answer comes at last: nobody waits for it any more, and it changes nothing.
        #expect(await apps.wechat.deliver(WeChatPayResult(errCode: -2)) == true, "the abandoned bridge call takes it")
        #expect(await apps.wechat.deliver(WeChatPayResult(errCode: -2)) == false)
        #expect(await h.server.orders.values.first?.status == .fulfilled)
    }

    @Test(
        "the relay: an answer within the grace period wins; after it, the wait has ended with no answer and late answers are dropped"
    )
    func relay() async throws {
        let relay = PaymentResultRelay<AlipayResult>()
        let answered = Task { await relay.wait(superseded: AlipayResult(resultStatus: "6001")) {} }
        try await Task.sleep(for: .milliseconds(20))
        await relay.appBecameActive(grace: 5)
        #expect(await relay.deliver(AlipayResult(resultStatus: "9000")))
        #expect(await answered.value.resultStatus == "9000")

        let silent = Task { await relay.wait(superseded: AlipayResult(resultStatus: "6001")) {} }
        try await Task.sleep(for: .milliseconds(20))
        await relay.appBecameActive(grace: 0.01)
        #expect(await BoundedAnswer.within(10) { await silent.value } == .noAnswer)
        #expect(await relay.deliver(AlipayResult(resultStatus: "9000")) == false, "late: dropped")
        #expect(AlipayResult.noAnswer.hint == .pending && WeChatPayResult.noAnswer.hint == .pending)
        await relay.appBecameActive()  // nobody waits: nothing happens
    }
}
