import Foundation
import LedgerTestSupport
import OrderSafeKit
import OrderSafeModel
import Testing

/// OrderSafeKit, through the same StoreKit adapter that ships to iOS (over StoreKitStandIn), against a real
/// `ordersafe serve` on loopback with its sandboxes: every channel, Ask to Buy across a relaunch, a refund reaching
/// the entitlements, and a restore on a new install. Serialized: the stand-in store is one per process, as StoreKit is.
@Suite("OrderSafeKit end to end against ordersafe serve", .serialized)
struct ClientSDKEndToEndTests {
    /// The Alipay and WeChat apps: they pay through the sandboxes' `pay` routes.
    struct SandboxPaymentApps: AlipayBridge, WeChatPayBridge {
        let base: String

        func pay(orderString: String) async -> AlipayResult {
            guard
                let answer = try? await AlipayFlowTests.request(
                    base + "/sandbox/alipay/pay", method: .POST, token: nil, body: orderString),
                let object = try? JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any]
            else { return AlipayResult(resultStatus: "6002") }
            return AlipayResult(dictionary: object)
        }

        func pay(_ request: WeChatPayRequest) async -> WeChatPayResult {
            let body =
                #"{"appid":"\#(request.appID)","partnerid":"\#(request.partnerID)","prepayid":"\#(request.prepayID)","package":"\#(request.package)","noncestr":"\#(request.nonceStr)","timestamp":"\#(request.timeStamp)","sign":"\#(request.sign)"}"#
            guard
                (try? await AlipayFlowTests.request(
                    base + "/sandbox/wechatpay/pay", method: .POST, token: nil, body: body)) != nil
            else {
                return WeChatPayResult(errCode: -1)
            }
            return WeChatPayResult(errCode: 0)
        }
    }

    /// A live `ordersafe serve` on the sandbox, alice's token, and a fresh folder for a phone's journal (removed after).
    static func withLiveServer(
        phone name: String, extra: [String: String] = [:],
        _ body: @escaping @Sendable (_ base: String, _ alice: String, _ folder: URL) async throws -> Void
    ) async throws {
        let (settings, _) = try await AlipayFlowTests.settings(port: try TestServer.freePort(), extra: extra)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(name)-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await AlipayFlowTests.live(settings) { base, alice in try await body(base, alice, folder) }
    }

    /// The transport of the apps these tests run against a live server: its requests wait up to 90 seconds for an
    /// answer, not the SDK's 20. These servers share two cores with the whole parallel suite, which has starved a
    /// request past 20 seconds (CI, stop 91: `sendAppTransaction` timed out in `appTransactionKeptPerUser`).
    static func liveTransport() -> URLSessionTransport { URLSessionTransport(timeout: 90) }

    /// The app on a phone of `user`'s (``liveTransport()``).
    static func app(base: String, token: String, user: String, journal: URL) -> OrderSafe {
        let apps = SandboxPaymentApps(base: base)
        return OrderSafe(
            configuration: OrderSafeConfiguration(
                serverURL: URL(string: base)!, token: { token }, userID: user, journalDirectory: journal, alipay: apps,
                wechatPay: apps,
                confirmation: ConfirmationPolicy(
                    firstDelay: 0.05, maxDelay: 0.5, timeout: 20)),
            transport: Self.liveTransport())
    }

    /// The user's balance as the server says it now. A read, so asked again when the request timed out all the same.
    static func balance(_ safe: OrderSafe, _ name: String) async throws -> Int64 {
        var attempt = 0
        while true {
            attempt += 1
            let holdings: HoldingsResponse
            do {
                holdings = try await safe.entitlements(allowCached: false)
            } catch {
                guard attempt < 5, case .server(.unreachable) = error else { throw error }
                continue
            }
            return holdings.balances.first { $0.name == name }?.amount ?? 0
        }
    }

    @Test(
        "a product the App Store cannot look up before the sheet (offline): the buyer hears nothing was charged, and nothing waits for a charge",
        .timeLimit(.hang))
    func offlineLookupIsNoCharge() async throws {
        try await Self.withLiveServer(phone: "offline-lookup") { base, alice, folder in
            // The phone's App Store is unreachable (nothing listens on port 9); OrderSafe's server is not.
            StandInDevice.connect(StandInDevice(server: URL(string: "http://127.0.0.1:9")!, deviceID: "offline-phone"))
            let safe = Self.app(base: base, token: alice, user: "alice", journal: folder)
            let outcome = await safe.purchase("coins_60", through: .appStore)
            guard case .failed(.store(.lookup)) = outcome.state else {
                Issue.record("\(outcome.state)")
                return
            }
            #expect(!outcome.storeMayHaveCharged)
            #expect(outcome.state != .awaitingConfirmation)
            let message = OrderSafeError.store(.lookup(.networkError)).message(in: .english)
            #expect(message.contains("nothing was charged"), "\(message)")
            #expect(await safe.isSettled(), "no order kept waiting for a charge that never was")
        }
    }

    @Test(
        "the StoreKit adapter finishes the transaction it is given, not the first unfinished one",
        .timeLimit(.hang))
    func finishesThatTransaction() async throws {
        let (settings, _) = try await AlipayFlowTests.settings(port: try TestServer.freePort())
        try await AlipayFlowTests.live(settings) { base, _ in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "finish-phone"))
            let store = StoreKitClient()
            var bought: [StoreTransaction] = []
            for _ in 0..<3 {
                guard
                    case .success(let transaction) = try await store.purchase(
                        productID: "com.example.ordersafe.coins60", appAccountToken: UUID(), signed: .init(),
                        confirmIn: nil)
                else {
                    Issue.record("the stand-in store did not charge")
                    return
                }
                bought.append(transaction)
            }
            #expect(await store.finish(bought[1]))
            #expect(Set(await store.unfinished().map(\.id)) == [bought[0].id, bought[2].id])
            #expect(await store.finish(bought[2]))
            #expect(await store.unfinished().map(\.id) == [bought[0].id])
        }
    }

    @Test(
        "every channel, Ask to Buy approved after a relaunch, a refund reaching the balance, a restore on a new install",
        .timeLimit(.hang))
    func endToEnd() async throws {
        try await Self.withLiveServer(phone: "e2e") { base, alice, folder in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "e2e-phone"))
            let safe = Self.app(
                base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("install-1"))
            await safe.start()
            let products = try await safe.products()
            #expect(products.unknownToStore.isEmpty)
            #expect(products.offers.first { $0.id == "coins_60" }?.store?.displayPrice == "CNY 6.00")

            let coins = await safe.purchase("coins_60", through: .appStore)
            #expect(coins.state == .fulfilled)
            #expect(await safe.purchase("gift_box", through: .alipay).state == .fulfilled)
            #expect(await safe.purchase("gift_box", through: .wechatPay).state == .fulfilled)
            #expect(try await Self.balance(safe, "coins") == 60)
            #expect(try await Self.balance(safe, "gift_boxes") == 2)
            #expect(await safe.isSettled())

            // Apple refunds the coins: the device hears it through Transaction.updates, the SDK submits the revoked
            // transaction, and the server takes the coins back.
            let payments =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try await AlipayFlowTests.request(
                            base + "/sandbox/appstore/payments", method: .GET, token: nil, body: nil)))
                as! [String: Any]
            let transactionID =
                ((payments["payments"] as! [[String: Any]]).first!["provider_transaction_id"] as! String)
            _ = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/refund", method: .POST, token: alice,
                body: #"{"transaction_id":"\#(transactionID)"}"#)
            var coinsLeft: Int64 = 60
            _ = try await eventually {
                coinsLeft = try await Self.balance(safe, "coins")
                return coinsLeft <= 0
            }
            #expect(coinsLeft == 0, "the refund reached the balance")

            // A non-consumable, then a new install on the same phone restores it.
            #expect(await safe.purchase("remove_ads", through: .appStore).state == .fulfilled)
            await safe.stop()
            let reinstalled = Self.app(
                base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("install-2"))
            let restored = try await reinstalled.restore()
            #expect(restored.holdings.entitlements.contains { $0.name == "no_ads" && $0.active })
            #expect(restored.ownedByOtherAccounts.isEmpty && restored.rejected.isEmpty)

            // Ask to Buy on a child's phone: pending; the parent approves while the app is closed; the next launch
            // records and finishes it for the order made at the time.
            StandInDevice.connect(
                StandInDevice(server: URL(string: base)!, deviceID: "e2e-child-phone", asksToBuy: true))
            let child = Self.app(
                base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("child"))
            let pending = await child.purchase("coins_60", through: .appStore)
            #expect(pending.state == .pending)
            await child.stop()
            let requests =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try await AlipayFlowTests.request(
                            base + "/sandbox/appstore/devices/e2e-child-phone/ask-to-buy", method: .GET, token: nil,
                            body: nil))) as! [String: Any]
            let requestID = (requests["requests"] as! [[String: Any]]).first!["request_id"] as! String
            _ = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/devices/e2e-child-phone/ask-to-buy/\(requestID)/approve", method: .POST,
                token: nil, body: "{}")
            let relaunched = Self.app(
                base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("child"))
            let events = relaunched.events()
            await relaunched.start()  // the listener or the sweep records it, whichever meets it first
            var approved: PurchaseOutcome?
            for await event in events {
                if case .purchaseOutcome(let outcome) = event, outcome.isFinal {
                    approved = outcome
                    break
                }
            }
            #expect(approved?.state == .fulfilled)
            #expect(approved?.orderNo == pending.orderNo)
            #expect(try await eventually { await relaunched.isSettled() })
            await relaunched.stop()
        }
    }
}
