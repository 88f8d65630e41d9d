import Foundation
import OrderSafeKit
import StoreKitStandIn
import Testing

/// StoreKit's other entry points through the adapter that ships to iOS: a promoted in-app purchase tapped on the
/// sandbox App Store, and the purchase sheet over the scene the app names. In the serialized suite: one stand-in
/// store per process.
extension ClientSDKEndToEndTests {
    @Test(
        "a promoted purchase tapped on the App Store waits for the app, which buys it over its scene, bound to an order",
        .timeLimit(.minutes(3)))
    func promotedPurchaseOverAScene() async throws {
        try await Self.withLiveServer(phone: "promoted") { base, alice, folder in
            let device = base + "/sandbox/appstore/devices/promoted-phone"
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "promoted-phone"))
            let safe = Self.app(base: base, token: alice, user: "alice", journal: folder)
            await safe.start()
            _ = try await AlipayFlowTests.request(
                device + "/promoted-purchase", method: .POST, token: alice,
                body: #"{"product_id":"com.example.ordersafe.coins60"}"#)
            var waiting: [String] = []
            for _ in 0..<600 where waiting.isEmpty {  // 30 s at most: CI's two cores run every suite at once
                try await Task.sleep(for: .milliseconds(50))
                waiting = safe.snapshot().promotedPurchases
            }
            #expect(waiting == ["coins_60"], "the intent reached the app as its catalog product")
            #expect(try await Self.balance(safe, "coins") == 0, "nothing is charged before the app buys it")

            let scene = await UIScene(title: "shop window")
            let outcome = await safe.purchase("coins_60", through: .appStore, confirmIn: scene)
            #expect(outcome.state == .fulfilled)
            #expect(outcome.orderNo != nil)
            #expect(safe.snapshot().promotedPurchases.isEmpty)
            #expect(try await Self.balance(safe, "coins") == 60)
            let payments =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try await AlipayFlowTests.request(
                            base + "/sandbox/appstore/payments", method: .GET, token: nil, body: nil)))
                as? [String: Any]
            let mine = (payments?["payments"] as? [[String: Any]] ?? []).filter {
                $0["device"] as? String == "promoted-phone"
            }
            #expect(mine.map { $0["scene"] as? String } == ["shop window"], "the sheet was shown over the app's scene")

            // The App Store sells no such product: the sandbox refuses to promote it.
            await #expect(throws: (any Error).self) {
                try await AlipayFlowTests.request(
                    device + "/promoted-purchase", method: .POST, token: alice, body: #"{"product_id":"no.such"}"#)
            }
            await safe.stop()
        }
    }
}
