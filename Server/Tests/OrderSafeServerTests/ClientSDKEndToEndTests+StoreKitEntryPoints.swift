import Foundation
import LedgerTestSupport
import OrderSafeKit
import Testing

/// StoreKit's other entry points through the adapter that ships to iOS: a promoted in-app purchase tapped on the
/// sandbox App Store, and the purchase sheet over the scene the app names. In the serialized suite: one stand-in
/// store per process.
extension ClientSDKEndToEndTests {
    @Test(
        "a promoted purchase tapped on the App Store waits for the app, which buys it over its scene, bound to an order",
        .timeLimit(.hang))
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
            _ = try await eventually {
                waiting = safe.snapshot().promotedPurchases
                return !waiting.isEmpty
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

extension ClientSDKEndToEndTests {
    @Test(
        "a subscription bought with an offer the server signed, checked by the App Store; Apple's sheets over a window",
        .timeLimit(.hang))
    func subscriptionOfferAndSheets() async throws {
        try await Self.withLiveServer(phone: "offers") { base, alice, folder in
            let phone = StandInDevice(server: URL(string: base)!, deviceID: "offers-phone")
            StandInDevice.connect(phone)
            let safe = Self.app(base: base, token: alice, user: "alice", journal: folder)
            await safe.start()
            #expect(
                try await safe.introductoryOfferEligibility().map(\.eligible) == [true, true],
                "nothing subscribed yet: vip_monthly and vip_plus_monthly")

            let outcome = await safe.purchase("vip_monthly", offer: "FIRST_MONTH")
            #expect(outcome.state == .fulfilled, "\(outcome.state)")
            // The App Store took the server's signature and says so in the transaction.
            let transactions = await StoreKitClient().currentEntitlements()
            let bought = try #require(transactions.first { $0.productID == "com.example.ordersafe.vip.monthly" })
            let claims = try #require(IntroductoryEligibilityTests.claims(bought.jwsRepresentation))
            #expect(claims["offerType"] as? Int == 2 && claims["offerIdentifier"] as? String == "FIRST_MONTH")
            #expect(claims["price"] as? Int == 6000 && claims["offerDiscountType"] as? String == "PAY_AS_YOU_GO")
            #expect(try await safe.subscriptions(allowCached: false).subscriptions.first?.state == .active)
            #expect(try await safe.introductoryOfferEligibility().map(\.eligible) == [false, false])

            // An offer the server will not sign for a consumable: refused before StoreKit; nothing charged.
            let refused = await safe.purchase("coins_60", offer: "FIRST_MONTH")
            guard case .failed(.server(.refused(_, "offer_not_applicable", _))) = refused.state else {
                Issue.record("\(refused.state)")
                return
            }

            let window = await UIWindowScene(title: "settings")
            try await safe.showManageSubscriptions(in: window, subscriptionGroupID: "21000001")
            #expect(try await safe.requestRefund(for: "vip_monthly", in: window))
            // Coins are never among StoreKit's entitlements: refunded by order, the server naming the transaction.
            let coins = await safe.purchase("coins_60", through: .appStore)
            #expect(coins.state == .fulfilled, "\(coins.state)")
            #expect(try await safe.requestRefund(forOrder: try #require(coins.orderNo), in: window))
            let sheets = phone.sheetsShown.map(\.sheet)
            #expect(sheets.prefix(2) == ["manage_subscriptions:21000001", "refund_request:\(bought.id)"])
            let coinsID = try #require(sheets.last?.split(separator: ":").last.flatMap { UInt64($0) })
            #expect(sheets.count == 3 && coinsID != bought.id)
            await safe.stop()
        }
    }
}
