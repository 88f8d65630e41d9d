import Foundation
import Hummingbird
import LedgerTestSupport
import OrderSafeKit
import OrderSafeModel
import Synchronization
import Testing

@testable import OrderSafeServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// OrderSafeKit against `ordersafe serve` where the real world is unkind: a proxy that mangles the server's answers,
/// and a server whose App Store settings are wrong. In the end-to-end suite: the stand-in store is one per process.
extension ClientSDKEndToEndTests {
    /// Forwards every request to the server (which records what it is sent) and rewrites App Store submissions'
    /// answers, as a broken proxy or gateway would.
    final class RewritingProxy: HTTPTransport {
        let real = ClientSDKEndToEndTests.liveTransport()
        let rewrite = Mutex<(@Sendable (Int, Data) -> (Int, Data))?>(nil)

        func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
            let answer = try await real.send(request)
            guard request.url?.path.hasSuffix("/appstore/transactions") == true, let rewrite = rewrite.withLock({ $0 })
            else { return answer }
            return rewrite(answer.status, answer.body)
        }
    }

    /// A clock the test moves past the SDK's waits.
    final class MovableClock: Sendable {
        private let offset = Mutex<TimeInterval>(0)
        func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }
        func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    }

    static func app(
        base: String, token: String, user: String = "alice", journal: URL, transport: any HTTPTransport,
        clock: MovableClock
    ) -> OrderSafe {
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: base)!, token: { token }, userID: user, journalDirectory: journal)
        configuration.now = { clock.now() }
        return OrderSafe(configuration: configuration, store: StoreKitClient(), transport: transport)
    }

    @Test(
        "through a proxy, any answer that is not `recorded` for the exact transaction leaves it unfinished; answered right, it is finished once",
        .timeLimit(.hang))
    func proxyAnswers() async throws {
        try await Self.withLiveServer(phone: "proxy") { base, alice, folder in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "proxy-phone"))
            let proxy = RewritingProxy()
            let clock = MovableClock()
            let safe = Self.app(base: base, token: alice, journal: folder, transport: proxy, clock: clock)
            let answers: [(String, @Sendable (Int, Data) -> (Int, Data))] = [
                (
                    "recorded for another id",
                    { _, _ in
                        (
                            200,
                            Data(
                                #"{"verdict":"recorded","transactions":[{"transaction_id":"1","verdict":"recorded"}]}"#
                                    .utf8)
                        )
                    }
                ),
                ("no verdicts", { _, _ in (200, Data(#"{"verdict":"recorded","transactions":[]}"#.utf8)) }),
                ("an HTML error page", { _, _ in (200, Data("<html>502 Bad Gateway</html>".utf8)) }),
                (
                    "the verdict turned to rejected",
                    { status, body in
                        (
                            status,
                            Data(
                                String(decoding: body, as: UTF8.self).replacingOccurrences(
                                    of: "\"recorded\"", with: "\"rejected\""
                                ).utf8)
                        )
                    }
                ),
                ("a gateway's 502", { _, _ in (502, Data()) }),
            ]
            for (index, (name, rewrite)) in answers.enumerated() {
                proxy.rewrite.withLock { $0 = rewrite }
                let outcome = await safe.purchase("coins_60", through: .appStore)
                #expect(outcome.state != .fulfilled, "\(name): \(outcome.name)")
                #expect(
                    await StoreKitClient().unfinished().count == index + 1,
                    "\(name): finished on an answer that did not record it")
            }
            // The proxy is fixed: the next sweeps (after the SDK's wait) record and finish every one, once.
            proxy.rewrite.withLock { $0 = nil }
            clock.advance(by: 31)
            await safe.resume()
            #expect(await StoreKitClient().unfinished().isEmpty)
            let coins = try await Self.balance(safe, "coins")
            #expect(coins == 60 * Int64(answers.count))
            #expect(await safe.isSettled())
        }
    }

    @Test(
        "wrong bundle id: purchases held and unfinished, shown in the console; the setting fixed and replayed: each credited once and finished",
        .timeLimit(.hang))
    func misconfiguredServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-held-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = [
            "ORDERSAFE_SERVER_DATA_DIR": directory.path,
            "ORDERSAFE_DATABASE_URL": "sqlite:\(directory.path)/ordersafe.sqlite",
        ]
        _ = try SandboxProviders(settings: try await TestServer.settings(extra: base).server, logger: TestLog.logger)
        let wrong = try await TestServer.settings(
            extra: base.merging([
                "ORDERSAFE_SERVER_PORT": "\(try TestServer.freePort())",
                "ORDERSAFE_APPSTORE_BUNDLE_ID": "com.example.wrong",
                "ORDERSAFE_APPSTORE_ENVIRONMENT": "Sandbox",
                "ORDERSAFE_APPSTORE_ROOT_CERTIFICATES": directory.path + "/sandbox/appstore-root.der",
            ]) { $1 })
        let fixed = try await TestServer.settings(
            extra: base.merging(["ORDERSAFE_SERVER_PORT": "\(try TestServer.freePort())"]) { $1 })
        let journal = directory.appendingPathComponent("phone")
        let clock = MovableClock()
        try await AlipayFlowTests.live(wrong) { url, alice in
            StandInDevice.connect(StandInDevice(server: URL(string: url)!, deviceID: "held-phone"))
            let safe = Self.app(
                base: url, token: alice, journal: journal, transport: Self.liveTransport(), clock: clock)
            for _ in 0..<3 {
                let outcome = await safe.purchase("coins_60", through: .appStore)
                #expect(outcome.state == .underReview, "\(outcome.name)")
            }
            #expect(await StoreKitClient().unfinished().count == 3)
            let stats = try await AlipayFlowTests.request(
                url + "/v1/admin/stats", method: .GET, token: TestServer.adminKey, body: nil)
            // The three submissions, and the App Store's notifications of them that have arrived (held alike).
            let held = (try JSONSerialization.jsonObject(with: Data(stats)) as? [String: Any])?["held_submissions"]
            #expect((3...6).contains(held as? Int ?? 0), "\(String(decoding: stats, as: UTF8.self))")
        }
        try await AlipayFlowTests.live(fixed) { url, alice in
            StandInDevice.connect(StandInDevice(server: URL(string: url)!, deviceID: "held-phone"))
            let replayed = try await AlipayFlowTests.request(
                url + "/v1/admin/appstore/held/replay", method: .POST, token: TestServer.adminKey, body: nil)
            // Every held submission recorded; the held notifications that the sandbox did not send again at the
            // restart (applied then) applied now.
            let replay = try JSONSerialization.jsonObject(with: Data(replayed)) as? [String: Int]
            #expect(
                replay?["failed"] == 0 && replay?["still_held"] == 0 && (3...6).contains(replay?["recorded"] ?? 0),
                "\(String(decoding: replayed, as: UTF8.self))")
            // The app's next launch, once its wait is over: every transaction answered recorded, and finished.
            clock.advance(by: 31)
            let safe = Self.app(
                base: url, token: alice, journal: journal, transport: Self.liveTransport(), clock: clock)
            let outcomes = await safe.start()
            #expect(outcomes.filter { $0.state == .fulfilled }.count == 3, "\(outcomes.map(\.name))")
            #expect(await StoreKitClient().unfinished().isEmpty)
            let coins = try await Self.balance(safe, "coins")
            #expect(coins == 180)
            await safe.stop()
        }
    }

    @Test(
        "an unkind iPhone: a purchase interrupted after the charge, payments forbidden, an App Store sync that fails",
        .timeLimit(.hang))
    func unkindPhone() async throws {
        try await Self.withLiveServer(phone: "unkind") { base, alice, folder in
            let clock = MovableClock()
            StandInDevice.connect(
                StandInDevice(
                    server: URL(string: base)!, deviceID: "unkind-phone",
                    unkindness: .init(interruptsPurchases: true, syncFailure: .userCancelled)))
            let safe = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            let interrupted = await safe.purchase("coins_60", through: .appStore)
            #expect(
                interrupted.state == .awaitingConfirmation && interrupted.storeMayHaveCharged, "\(interrupted.name)")
            #expect(await StoreKitClient().unfinished().count == 1, "charged, waiting in the queue")
            let resumed = await safe.resume()
            #expect(resumed.contains { $0.state == .fulfilled }, "\(resumed.map(\.name))")
            let coins = try await Self.balance(safe, "coins")
            #expect(coins == 60)
            #expect(await StoreKitClient().unfinished().isEmpty)
            #expect(await safe.isSettled())
            do {
                _ = try await safe.restore()
                Issue.record("restore went on although AppStore.sync() failed")
            } catch {
                #expect((error as? OrderSafeError) == .store(.storeKit(.userCancelled)), "\(error)")
            }

            StandInDevice.connect(
                StandInDevice(
                    server: URL(string: base)!, deviceID: "unkind-phone", unkindness: .init(paymentsNotAllowed: true)))
            let forbidden = await safe.purchase("coins_60", through: .appStore)
            #expect(forbidden.state == .failed(.paymentsNotAllowed))
            let canPay = try await safe.products().canMakePayments
            #expect(!canPay)

            // The sheet says "cancelled" although the App Store charged (iOS 18): the charge is found and credited.
            StandInDevice.connect(
                StandInDevice(
                    server: URL(string: base)!, deviceID: "unkind-phone", unkindness: .init(cancelsAfterCharge: true)))
            let falselyCancelled = await safe.purchase("coins_60", through: .appStore)
            #expect(falselyCancelled.state == .fulfilled, "\(falselyCancelled.name)")
            let coinsAfter = try await Self.balance(safe, "coins")
            #expect(coinsAfter == 120)
            #expect(await StoreKitClient().unfinished().isEmpty)
        }
    }

    @Test(
        "made elsewhere while the app was closed (another device of the Apple ID, Family Sharing, an offer code, a renewal): each recorded for the signed-in user at launch and finished once",
        .timeLimit(.hang))
    func madeElsewhere() async throws {
        try await Self.withLiveServer(phone: "elsewhere") { base, alice, folder in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "elsewhere-phone"))
            let clock = MovableClock()
            var safe = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            #expect(await safe.purchase("vip_monthly", through: .appStore).state == .fulfilled)
            let vip = try #require(
                await StoreKitClient().currentEntitlements().first {
                    $0.productID == "com.example.ordersafe.vip.monthly"
                })
            #expect(vip.appAccountToken != nil)
            await safe.stop()
            // alice's iPad made an order and paid for it; the App Store delivers its transaction to this phone too.
            let order = try OrderSafeJSON.decoder().decode(
                OrderResponse.self,
                from: Data(
                    try await AlipayFlowTests.request(
                        base + "/v1/orders", method: .POST, token: alice,
                        body: #"{"product_id":"coins_60","channel":"appstore"}"#))
            ).order
            let device = base + "/sandbox/appstore/devices/elsewhere-phone/deliver"
            for body in [
                #"{"product_id":"com.example.ordersafe.coins60","from":"other_device","app_account_token":"\#(order.orderUUID.uuidString)"}"#,
                #"{"product_id":"com.example.ordersafe.removeads","from":"family_shared"}"#,
                #"{"product_id":"com.example.ordersafe.coins300","from":"offer_code","offer_code":"SPRING300"}"#,
                #"{"product_id":"com.example.ordersafe.vip.monthly","from":"renewal","original_transaction_id":"\#(vip.id)"}"#,
            ] {
                _ = try await AlipayFlowTests.request(device, method: .POST, token: nil, body: body)
            }
            let waiting = await StoreKitClient().unfinished()
            #expect(waiting.count == 4)
            #expect(
                waiting.last?.appAccountToken == vip.appAccountToken, "a renewal carries its original purchase's token")
            #expect(
                waiting.filter { $0.appAccountToken == nil }.count == 2,
                "Family Sharing and an offer code carry no token")
            var delivered: [StoreKitStandIn.Transaction] = []
            for await result in StoreKitStandIn.Transaction.unfinished { delivered.append(result.unsafePayloadValue) }
            #expect(delivered.map(\.ownershipType) == [.purchased, .familyShared, .purchased, .purchased])
            #expect(delivered.map(\.offerType) == [nil, nil, .code, nil])
            #expect(delivered.map(\.offerID) == [nil, nil, "SPRING300", nil])
            // The next launch records each for alice and finishes it.
            safe = Self.app(base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            let outcomes = await safe.start()
            #expect(outcomes.count == 4 && outcomes.allSatisfy { $0.state == .fulfilled }, "\(outcomes.map(\.name))")
            #expect(outcomes.contains { $0.orderNo == order.orderNo }, "the iPad's order is the one paid")
            #expect(await StoreKitClient().unfinished().isEmpty)
            let holdings = try await safe.entitlements(allowCached: false)
            #expect(holdings.balances.first { $0.name == "coins" }?.amount == 360)
            #expect(Set(holdings.entitlements.map(\.name)) == ["vip", "no_ads"])
            #expect(await safe.start().isEmpty, "nothing is recorded or shown twice")
            await safe.stop()
        }
    }

    @Test(
        "a phone that cannot verify transactions: the server verifies and credits each once, the app shows it credited, never finishes it, and does not submit it again",
        .timeLimit(.hang))
    func unverifiedOnTheDevice() async throws {
        try await Self.withLiveServer(phone: "unverified") { base, alice, folder in
            StandInDevice.connect(
                StandInDevice(
                    server: URL(string: base)!, deviceID: "unverifying-phone",
                    unkindness: .init(deviceVerificationFailure: .invalidDeviceVerification)))
            let proxy = RewritingProxy()
            let safe = Self.app(base: base, token: alice, journal: folder, transport: proxy, clock: MovableClock())
            let outcome = await safe.purchase("coins_60", through: .appStore)
            #expect(outcome.state == .fulfilled, "\(outcome.name)")
            let left = await StoreKitClient().unfinished()
            #expect(left.count == 1 && left.first?.verificationFailure == "invalidDeviceVerification")
            // Every later launch meets it unfinished: it is not submitted again (a proxy that would refuse it is never asked).
            proxy.rewrite.withLock { $0 = { _, _ in (500, Data()) } }
            #expect(await safe.resume().isEmpty)
            #expect(await safe.isSettled())
            proxy.rewrite.withLock { $0 = nil }
            let coins = try await Self.balance(safe, "coins")
            #expect(coins == 60)
        }
    }

    @Test(
        "verification failing for some transactions only: each is credited once; the verified one is finished, the other left unfinished and not submitted again",
        .timeLimit(.hang))
    func unverifiedSometimes() async throws {
        try await Self.withLiveServer(phone: "sometimes") { base, alice, folder in
            StandInDevice.connect(
                StandInDevice(
                    server: URL(string: base)!, deviceID: "sometimes-phone",
                    unkindness: .init(transactionVerificationFailure: { $0 % 2 == 0 ? .invalidSignature : nil })))
            let safe = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: MovableClock())
            let first = await safe.purchase("coins_60", through: .appStore)
            let second = await safe.purchase("coins_60", through: .appStore)
            #expect(first.state == .fulfilled && second.state == .fulfilled, "\(first.name) \(second.name)")
            let left = await StoreKitClient().unfinished()
            #expect(left.count == 1 && left.first.map { $0.id % 2 == 0 } == true, "\(left.map(\.id))")
            #expect(left.first?.verificationFailure == "invalidSignature")
            #expect(await safe.resume().isEmpty)
            let coins = try await Self.balance(safe, "coins")
            #expect(coins == 120, "each credited once")
        }
    }

    @Test(
        "one Apple ID on two phones with different app users: a renewal and a refund reach both; the renewal is alice's, recorded for her once, finished on both, never shown to bob",
        .timeLimit(.hang))
    func appleIDOnTwoPhones() async throws {
        try await Self.withLiveServer(phone: "family") { base, alice, folder in
            let bob = try await TestServer.token("bob", issuedAt: Date())
            for phone in ["alice-phone", "bob-phone"] {
                _ = try await AlipayFlowTests.request(
                    base + "/sandbox/appstore/devices/\(phone)/apple-id", method: .POST, token: nil,
                    body: #"{"apple_id":"family@example.com"}"#)
            }
            let clock = MovableClock()
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "alice-phone"))
            let alices = Self.app(
                base: base, token: alice, journal: folder.appendingPathComponent("alice"),
                transport: Self.liveTransport(), clock: clock)
            #expect(await alices.purchase("vip_monthly", through: .appStore).state == .fulfilled)
            let vip = try #require(await StoreKitClient().currentEntitlements().first)
            let renewal = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/devices/alice-phone/deliver", method: .POST, token: nil,
                body:
                    #"{"product_id":"com.example.ordersafe.vip.monthly","from":"renewal","original_transaction_id":"\#(vip.id)"}"#
            )
            let renewalID = try #require(
                (try JSONSerialization.jsonObject(with: Data(renewal)) as? [String: Any])?["transaction_id"] as? String)

            // Bob's phone, same Apple ID: the renewal arrives there too, with alice's order's token.
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "bob-phone"))
            #expect(await StoreKitClient().unfinished().map { String($0.id) } == [renewalID])
            let bobs = Self.app(
                base: base, token: bob, user: "bob", journal: folder.appendingPathComponent("bob"),
                transport: Self.liveTransport(), clock: clock)
            var shownToBob: [PurchaseOutcome] = []
            let (_, events) = bobs.follow()
            let watcher = Task {
                var seen: [PurchaseOutcome] = []
                for await event in events { if case .purchaseOutcome(let outcome) = event { seen.append(outcome) } }
                return seen
            }
            _ = await bobs.start()
            #expect(await StoreKitClient().unfinished().isEmpty, "recorded (for alice), so finished on bob's phone")
            #expect(try await bobs.subscriptions(allowCached: false).subscriptions.isEmpty, "nothing of it is bob's")
            await bobs.stop()
            watcher.cancel()
            shownToBob = await watcher.value
            #expect(shownToBob.isEmpty, "bob is shown nothing of alice's renewal: \(shownToBob.map(\.name))")

            // Back on alice's phone: her renewal, recorded once, finished there at her next launch.
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "alice-phone"))
            _ = await alices.resume()
            #expect(await StoreKitClient().unfinished().isEmpty)
            #expect(try await alices.subscriptions(allowCached: false).subscriptions.first?.state == .active)

            // Apple refunds the renewal: both phones hear of it.
            _ = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/refund", method: .POST, token: nil,
                body: #"{"transaction_id":"\#(renewalID)"}"#)
            for phone in ["alice-phone", "bob-phone"] {
                let updates =
                    try JSONSerialization.jsonObject(
                        with: Data(
                            try await AlipayFlowTests.request(
                                base + "/sandbox/appstore/devices/\(phone)/updates?after=0", method: .GET, token: nil,
                                body: nil))) as? [String: Any]
                let signed = updates?["signed_transactions"] as? [String] ?? []
                #expect(
                    signed.contains { IntroductoryEligibilityTests.claims($0)?["revocationDate"] != nil },
                    "\(phone) hears of the refund")
            }
        }
    }

    /// A parent approves the phone's first waiting Ask to Buy request, and the App Store drops the order's token.
    static func approveWithoutToken(_ device: String) async throws {
        let requests =
            try JSONSerialization.jsonObject(
                with: Data(
                    try await AlipayFlowTests.request(device + "/ask-to-buy", method: .GET, token: nil, body: nil)))
            as? [String: Any]
        let requestID = try #require((requests?["requests"] as? [[String: Any]])?.first?["request_id"] as? String)
        _ = try await AlipayFlowTests.request(
            device + "/ask-to-buy/\(requestID)/approve?without_token=1", method: .POST, token: nil, body: "{}")
    }

    @Test(
        "an Ask to Buy approved without the order's token: credited once to the child's user, finished, and the request's entry ends with it (never told cancelled when it would lapse)",
        .timeLimit(.hang))
    func askToBuyApprovedWithoutToken() async throws {
        try await Self.withLiveServer(phone: "tokenless") { base, alice, folder in
            StandInDevice.connect(
                StandInDevice(server: URL(string: base)!, deviceID: "tokenless-phone", asksToBuy: true))
            let clock = MovableClock()
            let child = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            let pending = await child.purchase("coins_60", through: .appStore)
            #expect(pending.state == .pending)
            await child.stop()
            let device = base + "/sandbox/appstore/devices/tokenless-phone"
            try await Self.approveWithoutToken(device)
            #expect(await StoreKitClient().unfinished().first?.appAccountToken == nil, "approved without the token")

            let relaunched = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            let outcomes = await relaunched.start()
            #expect(outcomes.map(\.state) == [.fulfilled], "\(outcomes.map(\.name))")
            #expect(await StoreKitClient().unfinished().isEmpty)
            let entries = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                $0.hasSuffix(".json")
            }
            #expect(entries.isEmpty, "the request's entry ended with its transaction: \(entries)")
            let coins = try await Self.balance(relaunched, "coins")
            #expect(coins == 60, "credited once")
            await relaunched.stop()
        }
    }

    @Test(
        "an Ask to Buy approved without the token while another user of the phone is signed in: not credited to them; it waits, unfinished, for the user who asked",
        .timeLimit(.hang))
    func askToBuyApprovedWithoutTokenForAnotherUser() async throws {
        try await Self.withLiveServer(phone: "shared") { base, alice, folder in
            let bob = try await TestServer.token("bob", issuedAt: Date())
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "shared-phone", asksToBuy: true))
            let clock = MovableClock()
            let child = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            #expect(await child.purchase("coins_60", through: .appStore).state == .pending)
            await child.stop()
            let device = base + "/sandbox/appstore/devices/shared-phone"
            try await Self.approveWithoutToken(device)

            // Bob has the phone now, and asks for the same product himself: the approval is of alice's request (his
            // came after it), so his launch neither submits nor finishes it.
            let bobs = Self.app(
                base: base, token: bob, user: "bob", journal: folder, transport: Self.liveTransport(), clock: clock)
            let bobsRequest = await bobs.purchase("coins_60", through: .appStore)
            #expect(bobsRequest.state == .pending)
            let relaunched = await bobs.start()
            #expect(relaunched.map(\.orderNo) == [bobsRequest.orderNo] && relaunched.first?.state == .pending)
            #expect(await StoreKitClient().unfinished().map(\.appAccountToken) == [nil], "kept for alice")
            #expect(await bobs.isSettled(), "nothing of bob's is on its way")
            let bobsCoins = try await Self.balance(bobs, "coins")
            #expect(bobsCoins == 0, "never credited to bob")
            await bobs.stop()

            // Alice signs in again: hers, credited once, finished.
            let alices = Self.app(
                base: base, token: alice, journal: folder, transport: Self.liveTransport(), clock: clock)
            #expect(await alices.start().map(\.state) == [.fulfilled])
            #expect(await StoreKitClient().unfinished().isEmpty)
            let coins = try await Self.balance(alices, "coins")
            #expect(coins == 60)
            await alices.stop()
        }
    }
}
