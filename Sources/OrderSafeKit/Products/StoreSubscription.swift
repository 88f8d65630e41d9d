import Foundation
import OrderSafeModel

/// An auto-renewable subscription as the App Store describes it (`Product.SubscriptionInfo`): what App Review
/// guideline 3.1.2 asks a paywall to show beside the price.
public struct StoreSubscription: Sendable, Hashable {
    /// Its subscription group in App Store Connect.
    public var groupID: String
    /// How long one period lasts (what ``StoreProduct/displayPrice`` pays for).
    public var period: GrantPeriod
    /// The introductory offer as App Store Connect has it set up; whether this user may have it is the server's
    /// word (``PaywallProduct/introductoryOffer``).
    public var introductoryOffer: StoreSubscriptionOffer?
    public var promotionalOffers: [StoreSubscriptionOffer]
    /// Empty before iOS 18 (StoreKit lists win-back offers from iOS 18).
    public var winBackOffers: [StoreSubscriptionOffer]

    public init(
        groupID: String, period: GrantPeriod, introductoryOffer: StoreSubscriptionOffer? = nil,
        promotionalOffers: [StoreSubscriptionOffer] = [], winBackOffers: [StoreSubscriptionOffer] = []
    ) {
        self.groupID = groupID
        self.period = period
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
    }
}

/// A subscription offer's terms as the App Store describes them (`Product.SubscriptionOffer`).
public struct StoreSubscriptionOffer: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case introductory, promotional
        case winBack = "win_back"
    }

    /// Its id in App Store Connect; nil for an introductory offer.
    public var id: String?
    public var kind: Kind
    public var paymentMode: OfferPaymentMode
    /// One of its periods.
    public var period: GrantPeriod
    /// How many periods it lasts.
    public var periodCount: Int
    /// What each period costs (pay as you go) or the whole offer (pay up front); zero for a free trial. Display only.
    public var price: Decimal
    public var displayPrice: String

    public init(
        id: String?, kind: Kind, paymentMode: OfferPaymentMode, period: GrantPeriod, periodCount: Int, price: Decimal,
        displayPrice: String
    ) {
        self.id = id
        self.kind = kind
        self.paymentMode = paymentMode
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.displayPrice = displayPrice
    }
}
