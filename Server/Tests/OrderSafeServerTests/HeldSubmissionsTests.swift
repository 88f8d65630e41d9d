import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import Engine
@testable import OrderSafeServer

/// A server whose App Store settings are wrong fails every genuine purchase alike: that is no verdict about the
/// transactions. They are held, the device keeps them unfinished, and once the setting is fixed a replay records them.
@Suite("Held App Store submissions: a wrong setting holds every purchase; fixed and replayed, each is credited once")
struct HeldSubmissionsTests {
    static let buyers = 5

    struct Purchase: Sendable {
        var token: String
        var jws: String
        var orderNo: String
    }

    actor Bought {
        private(set) var all: [Purchase] = []
        func add(_ purchase: Purchase) { all.append(purchase) }
    }

    /// A data folder with the sandbox's keys and App Store root (as a first start writes them), and two settings on
    /// it: `base` (the sandbox's own App Store) and `wrong` (the same with another bundle id, as an operator's typo).
    static func wrongBundleSettings() async throws -> (base: [String: String], wrong: [String: String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-held-\(UUID().uuidString)"
        ).path
        let base = [
            "ORDERSAFE_SERVER_DATA_DIR": directory, "ORDERSAFE_DATABASE_URL": "sqlite:\(directory)/ordersafe.sqlite",
        ]
        _ = try SandboxProviders(
            settings: try await TestServer.settings(extra: base).server, clock: FixedClock(date: TestServer.now),
            logger: TestLog.logger)
        let wrong = base.merging([
            "ORDERSAFE_APPSTORE_BUNDLE_ID": "com.example.wrong", "ORDERSAFE_APPSTORE_ENVIRONMENT": "Sandbox",
            "ORDERSAFE_APPSTORE_ROOT_CERTIFICATES": directory + "/sandbox/appstore-root.der",
        ]) { $1 }
        return (base, wrong)
    }

    @Test(
        "wrong bundle id: every purchase held (503, the device keeps it), shown in the console; fixed and replayed: credited once each"
    )
    func wrongBundleID() async throws {
        let (base, wrong) = try await Self.wrongBundleSettings()
        let admin = TestServer.bearer(TestServer.adminKey)
        let bought = Bought()
        try await TestServer.withComponents(extra: wrong) { client, components, _ in
            let store = components.sandbox!.appStore
            for index in 0..<Self.buyers {
                let token = try await TestServer.token("buyer\(index)", lifetime: 86400)
                let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self).order
                let (_, jws) = try await store.purchase(
                    productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
                for _ in 0..<2 {  // the app submits again at its next launch: still one held entry
                    let answer = try await AppStoreFlowTests.submit(
                        client, token: token, #"{"signed_transaction":"\#(jws)"}"#)
                    #expect(try answer.status == .serviceUnavailable && answer.errorCode() == "transaction_held")
                }
                await bought.add(Purchase(token: token, jws: jws, orderNo: order.orderNo))
            }
            #expect(try await components.ledger.heldSubmissionCount() == Self.buyers)
            let stats = try await client.execute(uri: "/v1/admin/stats", method: .get, headers: admin)
            #expect(String(buffer: stats.body).contains(#""held_submissions":\#(Self.buyers)"#))
            let console = ConsoleClient(client)
            try await console.signIn(TestServer.adminKey)
            let overview = try await console.get("/admin")
            #expect(overview.html.contains(#"id="held-submissions">\#(Self.buyers)<"#))
            let operations = try await console.get("/admin/operations").html
            #expect(operations.contains(#"id="replay-held""#))
            // The form posts to the replay route of the channel that holds them.
            #expect(operations.contains(#"action="/admin/appstore/held/replay""#))
            // A replay before the setting is fixed changes nothing.
            let early = try await client.execute(uri: "/v1/admin/appstore/held/replay", method: .post, headers: admin)
            #expect(
                try early.decoded(HeldReplay.self)
                    == .init(recorded: 0, stillHeld: Self.buyers, failed: 0))
            for purchase in await bought.all {
                #expect(try await AppStoreFlowTests.balance(client, token: purchase.token) == 0)
            }
        }
        let held = await bought.all
        // The setting fixed (the sandbox's own App Store), the operator replays from the console.
        try await TestServer.withComponents(extra: base) { client, components, _ in
            let console = ConsoleClient(client)
            try await console.signIn(TestServer.adminKey)
            _ = try await console.get("/admin/operations")
            let replayed = try await console.post("/admin/appstore/held/replay")
            #expect(replayed.location == "/admin/operations?done=held_replayed#held")
            #expect(try await components.ledger.heldSubmissionCount() == 0)
            for purchase in held {
                #expect(try await AppStoreFlowTests.balance(client, token: purchase.token) == 60)
                // The device submits it again at its next launch: recorded for its order, and now it finishes it.
                let again = try await AppStoreFlowTests.submit(client, token: purchase.token, jws: purchase.jws)
                #expect(again.verdict == .recorded && again.order?.orderNo == purchase.orderNo)
                #expect(try await AppStoreFlowTests.balance(client, token: purchase.token) == 60)
            }
        }
    }

    @Test(
        "a refund Apple notifies while the settings are wrong is held (503), not dropped; fixed and replayed, it is taken back once"
    )
    func refundNotifiedWhileWrong() async throws {
        let (base, wrong) = try await Self.wrongBundleSettings()
        let admin = TestServer.bearer(TestServer.adminKey)
        let token = try await TestServer.token("refunded-buyer", lifetime: 86400)
        let bought = Bought()
        try await TestServer.withComponents(extra: base) { client, components, _ in
            let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self).order
            let (_, jws) = try await components.sandbox!.appStore.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: token, jws: jws).verdict == .recorded)
            await bought.add(Purchase(token: token, jws: jws, orderNo: order.orderNo))
        }
        let jws = try #require(await bought.all.first?.jws)
        try await TestServer.withComponents(extra: wrong) { client, components, _ in
            let store = components.sandbox!.appStore
            let id = try #require(IntroductoryEligibilityTests.claims(jws)?["transactionId"] as? String)
            let refunded = try await store.refund(transactionID: id)
            let notification = try await store.notification(type: "REFUND", signedTransaction: refunded)
            #expect(
                try await AppStoreFlowTests.notify(client, notification) == .serviceUnavailable, "Apple sends it again")
            #expect(try await components.ledger.heldSubmissionCount() == 1)
            #expect(try await AppStoreFlowTests.balance(client, token: token) == 60)
        }
        try await TestServer.withComponents(extra: base) { client, _, _ in
            let replayed = try await client.execute(
                uri: "/v1/admin/appstore/held/replay", method: .post, headers: admin)
            #expect(
                try replayed.decoded(HeldReplay.self) == .init(recorded: 1, stillHeld: 0, failed: 0))
            #expect(try await AppStoreFlowTests.balance(client, token: token) == 0, "taken back once")
            let again = try await client.execute(uri: "/v1/admin/appstore/held/replay", method: .post, headers: admin)
            #expect(try again.decoded(HeldReplay.self) == .init(recorded: 0, stillHeld: 0, failed: 0))
            #expect(try await AppStoreFlowTests.balance(client, token: token) == 0)
        }
    }
}
