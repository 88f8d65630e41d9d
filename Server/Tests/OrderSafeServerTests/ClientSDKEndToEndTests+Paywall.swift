import Foundation
import LedgerTestSupport
import OrderSafeKit
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// The paywall through the real SDK, the stand-ins and the sandbox App Store: StoreKit's terms of a subscription and
/// its introductory offer, shown and sold only as the server says the user may have it; the server's signed word
/// decides against the phone's Apple ID when the user subscribed with another one. (In the serialized suite: the
/// stand-in device is one per process, as StoreKit is.)
extension ClientSDKEndToEndTests {
    /// The example catalog with introductory offers: a week's free trial of VIP, a first month of VIP+ at ¥10 paid
    /// up front.
    static func catalogWithIntroductoryOffers() throws -> String {
        var catalog =
            try JSONSerialization.jsonObject(
                with: try CatalogLoader.bundledResource("catalog.example", ext: "json")) as! [String: Any]
        var products = catalog["products"] as! [[String: Any]]
        for index in products.indices {
            switch products[index]["id"] as? String {
            case "vip_monthly": products[index]["introductory_offer"] = ["payment_mode": "free_trial", "period": "P1W"]
            case "vip_plus_monthly":
                products[index]["introductory_offer"] = [
                    "payment_mode": "pay_up_front", "period": "P1M",
                    "price": ["amount_minor": 1000, "currency": "CNY"],
                ]
            default: break
            }
        }
        catalog["products"] = products
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-intro-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: catalog).write(to: file)
        return file.path
    }

    @Test(
        "the paywall: an eligible user sees and gets the free trial; then not; on another Apple ID the server's signature decides",
        .timeLimit(.hang))
    func introductoryOfferAsTheServerSays() async throws {
        let catalog = try Self.catalogWithIntroductoryOffers()
        defer { try? FileManager.default.removeItem(atPath: catalog) }
        try await Self.withLiveServer(phone: "paywall", extra: ["ORDERSAFE_CATALOG_FILE": catalog]) {
            base, alice, folder in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "paywall-phone-a"))
            let safe = Self.app(
                base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("a"))
            await safe.start()

            let before = try await safe.paywall()
            #expect(before.storefront?.countryCode == "CHN")
            let vip = try #require(before.products.first { $0.id == "vip_monthly" })
            #expect(vip.product.store?.currencyCode == "CNY")
            #expect(vip.product.store?.subscription?.period == GrantPeriod(count: 1, unit: .month))
            #expect(vip.pricePerPeriod(in: .english) == "CNY 25.00 / month")
            #expect(vip.isEligibleForIntroductoryOffer == true)
            #expect(vip.introductoryOffer?.terms(in: .english) == "Free for 1 week")
            #expect(vip.offers.map(\.id) == ["FIRST_MONTH", "SPRING_CAMPAIGN"])
            #expect(vip.offers.first?.terms?.displayPrice == "CNY 6.00", "StoreKit's terms of the listed offer")

            let trial = await safe.purchase("vip_monthly", through: .appStore)
            #expect(trial.state == .fulfilled, "\(trial.state)")
            #expect(trial.order?.amount == Money(amountMinor: 0, currency: .cny), "a free trial is charged nothing")
            let period = try #require(try await safe.subscriptions(allowCached: false).subscriptions.first)
            let week = try #require(period.expiresAt).timeIntervalSinceNow
            #expect((6 * 86400...7 * 86400).contains(week), "the trial lasts a week: \(week)")

            let after = try #require(try await safe.paywall().products.first { $0.id == "vip_monthly" })
            #expect(after.isEligibleForIntroductoryOffer == false)
            #expect(after.introductoryOffer == nil)
            #expect(after.offers.map(\.id) == ["STAY_HALF_PRICE"], "the offers for a subscriber now")
            await safe.stop()

            // Alice on a phone whose Apple ID never subscribed: StoreKit alone would give VIP+'s ¥10 first month;
            // the server's signed ineligibility goes with the purchase, and the App Store charges the full price.
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "paywall-phone-b"))
            let other = Self.app(
                base: base, token: alice, user: "alice", journal: folder.appendingPathComponent("b"))
            await other.start()
            let plus = try #require(try await other.paywall().products.first { $0.id == "vip_plus_monthly" })
            #expect(plus.isEligibleForIntroductoryOffer == false)
            #expect(plus.product.store?.subscription?.introductoryOffer?.terms(in: .english) == "CNY 10.00 for 1 month")
            let full = await other.purchase("vip_plus_monthly", through: .appStore)
            #expect(full.state == .fulfilled, "\(full.state)")
            #expect(
                full.order?.amount == Money(amountMinor: 4500, currency: .cny), "the server's word, not the phone's")
            await other.stop()

            // Bob, new on a new phone: the ¥10 month, paid up front.
            let bob = try await TestServer.token("bob", issuedAt: Date())
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "paywall-phone-c"))
            let third = Self.app(
                base: base, token: bob, user: "bob", journal: folder.appendingPathComponent("c"))
            await third.start()
            let offered = try #require(try await third.paywall().products.first { $0.id == "vip_plus_monthly" })
            #expect(offered.introductoryOffer?.terms(in: .simplifiedChinese) == "1个月共CNY 10.00")
            let paid = await third.purchase("vip_plus_monthly", through: .appStore)
            #expect(paid.order?.amount == Money(amountMinor: 1000, currency: .cny), "\(paid.state)")
            await third.stop()

            // Carol, new to the server, on alice's first phone: its Apple ID had the trial, and StoreKit alone
            // decides (the server signs only an ineligibility), so the App Store charges the full price.
            let carol = try await TestServer.token("carol", issuedAt: Date())
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "paywall-phone-a"))
            let shared = Self.app(base: base, token: carol, user: "carol", journal: folder.appendingPathComponent("d"))
            await shared.start()
            let charged = await shared.purchase("vip_plus_monthly", through: .appStore)
            #expect(charged.order?.amount == Money(amountMinor: 4500, currency: .cny), "the Apple ID's own history")
            await shared.stop()
        }
    }

    @Test(
        "the offer-code sheet over the app's scene, the code redeemed there recorded for the user; a storefront change told",
        .timeLimit(.hang))
    func offerCodeAndStorefront() async throws {
        try await Self.withLiveServer(phone: "offer-code") { base, alice, folder in
            let phone = StandInDevice(server: URL(string: base)!, deviceID: "offer-code-phone")
            StandInDevice.connect(phone)
            let safe = Self.app(base: base, token: alice, user: "alice", journal: folder)
            _ = await safe.start()
            var changes = safe.storefrontChanges().makeAsyncIterator()
            phone.changeStorefront(countryCode: "USA", id: "143441")
            #expect(await changes.next()?.countryCode == "USA")
            #expect(try await safe.paywall().storefront?.countryCode == "USA")

            let window = await UIWindowScene(title: "settings")
            try await safe.presentOfferCodeRedemption(in: window)
            #expect(phone.sheetsShown.map(\.sheet) == ["offer_code_redemption"])
            // The user redeems a code on the sheet: the App Store delivers its transaction to the running app.
            _ = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/devices/offer-code-phone/deliver", method: .POST, token: nil,
                body: #"{"product_id":"com.example.ordersafe.coins300","from":"offer_code","offer_code":"SPRING300"}"#)
            var coins: Int64 = 0
            _ = try await eventually {
                coins = try await Self.balance(safe, "coins")
                return coins >= 300
            }
            #expect(coins == 300, "the redeemed code's coins, once")
            await safe.stop()
        }
    }

    @Test(
        "the subscription as StoreKit on the phone knows it, beside the server's: subscribed and renewing, then revoked",
        .timeLimit(.hang))
    func subscriptionStatusOnTheDevice() async throws {
        try await Self.withLiveServer(phone: "device-status") { base, alice, folder in
            StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: "device-status-phone"))
            let safe = Self.app(base: base, token: alice, user: "alice", journal: folder)
            _ = await safe.start()
            #expect(try await safe.subscriptionStatusOnDevice(groupID: "21000001").isEmpty, "nothing bought yet")
            #expect(await safe.purchase("vip_monthly", through: .appStore).state == .fulfilled)
            let onDevice = try #require(try await safe.subscriptionStatusOnDevice(groupID: "21000001").first)
            #expect(onDevice.state == .subscribed && onDevice.willAutoRenew && onDevice.isVerified)
            #expect(onDevice.productID == "com.example.ordersafe.vip.monthly")
            #expect(onDevice.expirationDate.map { $0 > Date() } == true)
            let server = try #require(try await safe.subscriptions(allowCached: false).subscriptions.first)
            #expect(server.state == .active, "the server's word, beside it")

            _ = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/refund", method: .POST, token: alice,
                body: #"{"transaction_id":"\#(onDevice.originalTransactionID)"}"#)
            #expect(try await safe.subscriptionStatusOnDevice(groupID: "21000001").first?.state == .revoked)
            await safe.stop()
        }
    }
}
