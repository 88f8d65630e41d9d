import Foundation
import OrderSafeModel

/// Everything a paywall shows (App Review guideline 3.1.2): each product with its price per period, the
/// introductory offer the signed-in user would get, and the offers the server lists for them; the storefront.
public struct Paywall: Sendable, Hashable {
    /// Cheapest first, as ``ProductList``.
    public var products: [PaywallProduct]
    /// The App Store storefront the device buys in; nil when StoreKit cannot say.
    public var storefront: StoreStorefront?
    /// False when this device may not pay through the App Store (Screen Time restrictions).
    public var canMakePayments: Bool
    /// The user the eligibility and offers are for; nil signed out, or when the server could not say (then no
    /// product claims an introductory offer or lists an offer).
    public var userID: String?

    public init(products: [PaywallProduct], storefront: StoreStorefront?, canMakePayments: Bool, userID: String?) {
        self.products = products
        self.storefront = storefront
        self.canMakePayments = canMakePayments
        self.userID = userID
    }

    /// The paywall of `list` for `userID`, given what the server answered for that user (nil: not asked or no
    /// answer).
    init(list: ProductList, storefront: StoreStorefront?, userID: String?, answer: CatalogResponse?) {
        let eligibility = Dictionary(
            (answer?.introductoryOffers ?? []).map { ($0.productID, $0.eligible) },
            uniquingKeysWith: { first, _ in first })
        products = list.offers.map { offer in
            let subscription = offer.store?.subscription
            let eligible = answer == nil ? nil : eligibility[offer.id]
            let offers = (answer?.offers ?? []).filter { $0.productID == offer.id }.map { listed in
                PaywallOffer(
                    id: listed.offerID, kind: listed.kind,
                    terms: (subscription.map { $0.promotionalOffers + $0.winBackOffers } ?? []).first {
                        $0.id == listed.offerID
                    }, catalogPrice: listed.price, asksMerchant: listed.asksMerchant)
            }
            return PaywallProduct(
                product: offer, introductoryOffer: eligible == true ? subscription?.introductoryOffer : nil,
                isEligibleForIntroductoryOffer: subscription?.introductoryOffer == nil ? nil : eligible, offers: offers)
        }
        self.storefront = storefront
        canMakePayments = list.canMakePayments
        self.userID = answer == nil ? nil : userID
    }
}

/// One product on the paywall.
public struct PaywallProduct: Sendable, Hashable, Identifiable {
    /// The catalog's product with the App Store's details (price, currency, family sharing, subscription terms).
    public var product: ProductOffer
    /// The introductory offer a purchase gives this user: StoreKit's terms, only when the server says the user is
    /// eligible (StoreKit's own answer knows the phone's Apple ID only).
    public var introductoryOffer: StoreSubscriptionOffer?
    /// The server's word on the introductory offer; nil when the product has none, or signed out, or unknown.
    public var isEligibleForIntroductoryOffer: Bool?
    /// The promotional and win-back offers the server lists for this user, for
    /// ``OrderSafe/purchase(_:offer:confirmIn:)``.
    public var offers: [PaywallOffer]

    public var id: String { product.id }

    public init(
        product: ProductOffer, introductoryOffer: StoreSubscriptionOffer? = nil,
        isEligibleForIntroductoryOffer: Bool? = nil, offers: [PaywallOffer] = []
    ) {
        self.product = product
        self.introductoryOffer = introductoryOffer
        self.isEligibleForIntroductoryOffer = isEligibleForIntroductoryOffer
        self.offers = offers
    }

    /// A subscription's price per period as the storefront writes it (`CNY 25.00 / month`, `¥25.00/月`); nil for a
    /// product that is no App Store subscription StoreKit knows.
    public func pricePerPeriod(in language: MessageLanguage) -> String? {
        guard let store = product.store, let period = store.subscription?.period else { return nil }
        return PaywallText.pricePerPeriod(store.displayPrice, period, language)
    }
}

/// A promotional or win-back offer the server lists for the signed-in user.
public struct PaywallOffer: Sendable, Hashable, Identifiable {
    /// The offer's id in App Store Connect.
    public var id: String
    public var kind: SubscriptionOfferKind
    /// StoreKit's terms; nil where StoreKit does not list it (a win-back offer before iOS 18).
    public var terms: StoreSubscriptionOffer?
    /// What the catalog says its first period costs, for when StoreKit gives no terms.
    public var catalogPrice: Money?
    /// The merchant's backend decides when it is bought: the purchase may still be refused before any charge.
    public var asksMerchant: Bool

    public init(
        id: String, kind: SubscriptionOfferKind, terms: StoreSubscriptionOffer? = nil, catalogPrice: Money? = nil,
        asksMerchant: Bool = false
    ) {
        self.id = id
        self.kind = kind
        self.terms = terms
        self.catalogPrice = catalogPrice
        self.asksMerchant = asksMerchant
    }
}

extension StoreSubscriptionOffer {
    /// The offer's terms in a sentence (`Free for 1 week`, `CNY 6.00 / month for 3 months`, `免费试用1周`).
    public func terms(in language: MessageLanguage) -> String {
        let total = GrantPeriod(
            count: period.count.multipliedReportingOverflow(by: periodCount).partialValue, unit: period.unit)
        let duration = PaywallText.duration(total, language)
        switch paymentMode {
        case .freeTrial:
            return Messages.text("paywall.freeTrial", language, ["duration": duration])
        case .payUpFront:
            return Messages.text("paywall.payUpFront", language, ["price": displayPrice, "duration": duration])
        case .payAsYouGo:
            return Messages.text(
                "paywall.payAsYouGo", language,
                ["price": displayPrice, "period": PaywallText.period(period, language), "duration": duration])
        }
    }
}

/// How periods and prices read on a paywall.
enum PaywallText {
    /// `month`, `3 months`, `月`, `3个月`: what one price pays for.
    static func period(_ period: GrantPeriod, _ language: MessageLanguage) -> String {
        let unit = key(period.unit)
        return period.count == 1
            ? Messages.text("period.\(unit).one", language)
            : Messages.text("period.\(unit).many", language, ["count": String(period.count)])
    }

    /// `1 week`, `3 months`, `1周`, `3个月`: how long something lasts.
    static func duration(_ period: GrantPeriod, _ language: MessageLanguage) -> String {
        let unit = key(period.unit)
        return period.count == 1
            ? Messages.text("duration.\(unit).one", language)
            : Messages.text("period.\(unit).many", language, ["count": String(period.count)])
    }

    static func pricePerPeriod(_ price: String, _ period: GrantPeriod, _ language: MessageLanguage) -> String {
        Messages.text("paywall.pricePerPeriod", language, ["price": price, "period": self.period(period, language)])
    }

    private static func key(_ unit: GrantPeriod.Unit) -> String {
        switch unit {
        case .day: "day"
        case .week: "week"
        case .month: "month"
        case .year: "year"
        }
    }
}
