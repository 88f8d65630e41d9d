import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// What a paywall shows (App Review 3.1.2): a subscription's period, price per period, currency and family sharing
/// from StoreKit; the introductory offer only as the server says the user may have it; the offers the server lists
/// for the user, with StoreKit's terms.
@Suite("The paywall")
struct PaywallTests {
    static let vip = StoreProduct(
        id: "vip.ios", displayName: "VIP", description: "Everything", price: 25, displayPrice: "¥25.00",
        currencyCode: "CNY", isFamilyShareable: true,
        subscription: StoreSubscription(
            groupID: "21000001", period: GrantPeriod(count: 1, unit: .month),
            introductoryOffer: StoreSubscriptionOffer(
                id: nil, kind: .introductory, paymentMode: .freeTrial, period: GrantPeriod(count: 1, unit: .week),
                periodCount: 1, price: 0, displayPrice: "¥0.00"),
            promotionalOffers: [
                StoreSubscriptionOffer(
                    id: "FIRST_MONTH", kind: .promotional, paymentMode: .payAsYouGo,
                    period: GrantPeriod(count: 1, unit: .month), periodCount: 3, price: 6, displayPrice: "¥6.00")
            ]))

    static func harness() async -> Harness {
        let h = Harness()
        await h.store.describe(vip)
        await h.server.set(
            offers: [
                AvailableOffer(
                    productID: "vip", offerID: "FIRST_MONTH", kind: .promotional,
                    price: Money(amountMinor: 600, currency: .cny)),
                AvailableOffer(productID: "vip", offerID: "WINBACK_1", kind: .winBack, asksMerchant: true),
            ], for: "user-1")
        return h
    }

    @Test("an eligible user: the introductory offer's terms, the price per period, the offers listed for them")
    func eligibleUser() async throws {
        let h = await Self.harness()
        defer { h.cleanUp() }
        let paywall = try await h.app().paywall()
        #expect(paywall.userID == "user-1")
        #expect(paywall.storefront == StoreStorefront(countryCode: "CHN", id: "143465"))
        let vip = try #require(paywall.products.first { $0.id == "vip" })
        #expect(vip.product.store?.currencyCode == "CNY")
        #expect(vip.product.store?.isFamilyShareable == true)
        #expect(vip.product.store?.subscription?.period == GrantPeriod(count: 1, unit: .month))
        #expect(vip.pricePerPeriod(in: .english) == "¥25.00 / month")
        #expect(vip.pricePerPeriod(in: .simplifiedChinese) == "¥25.00/月")
        #expect(vip.isEligibleForIntroductoryOffer == true)
        let intro = try #require(vip.introductoryOffer)
        #expect(intro.terms(in: .english) == "Free for 1 week")
        #expect(intro.terms(in: .simplifiedChinese) == "免费试用1周")
        #expect(vip.offers.map(\.id) == ["FIRST_MONTH", "WINBACK_1"])
        #expect(vip.offers[0].terms?.terms(in: .english) == "¥6.00 / month for 3 months")
        #expect(vip.offers[0].terms?.terms(in: .simplifiedChinese) == "前3个月¥6.00/月")
        #expect(vip.offers[1].terms == nil, "StoreKit lists no such win-back offer: the catalog's word only")
        #expect(vip.offers[1].asksMerchant)
        let coins = try #require(paywall.products.first { $0.id == "coins" })
        #expect(coins.pricePerPeriod(in: .english) == nil, "no subscription, no period")
        #expect(coins.isEligibleForIntroductoryOffer == nil)
        #expect(coins.offers.isEmpty)
    }

    @Test("a user who subscribed before, whatever the phone's Apple ID: no introductory offer is shown")
    func ineligibleUser() async throws {
        let h = await Self.harness()
        defer { h.cleanUp() }
        await h.server.set(ineligible: "user-1")
        let vip = try #require(try await h.app().paywall().products.first { $0.id == "vip" })
        #expect(vip.isEligibleForIntroductoryOffer == false)
        #expect(vip.introductoryOffer == nil, "StoreKit's terms are there, the server says no")
        #expect(vip.product.store?.subscription?.introductoryOffer != nil)
    }

    @Test("signed out: the products and their terms, no introductory offer or offer promised")
    func nothingPromised() async throws {
        let h = await Self.harness()
        defer { h.cleanUp() }
        let app = h.app()
        await app.logOut()
        let paywall = try await app.paywall()
        #expect(paywall.userID == nil)
        let vip = try #require(paywall.products.first { $0.id == "vip" })
        #expect(vip.introductoryOffer == nil)
        #expect(vip.isEligibleForIntroductoryOffer == nil)
        #expect(vip.offers.isEmpty)
        #expect(vip.pricePerPeriod(in: .english) == "¥25.00 / month", "the price per period needs no user")
    }
}

/// The storefront and the offer-code sheet beside the paywall.
@Suite("The storefront and the offer-code sheet")
struct StorefrontTests {
    @Test("the storefront the account moves to is told as it changes; the paywall then shows the new one")
    @MainActor
    func storefrontChanges() async throws {
        let h = await PaywallTests.harness()
        defer { h.cleanUp() }
        let app = h.app()
        var changes = app.storefrontChanges().makeAsyncIterator()
        let usa = StoreStorefront(countryCode: "USA", id: "143441")
        await h.store.set(storefront: usa)
        #expect(await changes.next() == usa)
        #expect(try await app.paywall().storefront == usa)
    }

    @Test("the offer-code sheet is shown over the app's scene")
    @MainActor
    func offerCodeSheet() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let app = h.app()
        try await app.presentOfferCodeRedemption(in: UIScene(title: "settings"))
        #expect(await h.store.sheets == ["offer_code_redemption"])
    }
}
