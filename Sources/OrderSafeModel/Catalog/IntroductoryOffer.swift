/// An auto-renewable subscription's introductory offer as App Store Connect has it set up (`introductory_offer` in
/// the catalog): what a customer who never subscribed in the product's group pays for their first periods. StoreKit
/// describes it to the paywall (`Product.SubscriptionInfo.introductoryOffer`); the sandbox App Store sells it.
public struct IntroductoryOffer: Codable, Hashable, Sendable {
    public var paymentMode: OfferPaymentMode
    /// One of its periods (a free trial's or a paid-up-front offer's whole length).
    public var period: GrantPeriod
    /// How many periods it lasts: pay as you go, 1 to 12; otherwise 1.
    public var periods: Int
    /// What each period costs (pay as you go) or the whole offer (pay up front); none for a free trial.
    public var price: Money?

    public init(paymentMode: OfferPaymentMode, period: GrantPeriod, periods: Int = 1, price: Money? = nil) {
        self.paymentMode = paymentMode
        self.period = period
        self.periods = periods
        self.price = price
    }

    enum CodingKeys: String, CodingKey {
        case paymentMode = "payment_mode"
        case period, periods, price
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        paymentMode = try container.decode(OfferPaymentMode.self, forKey: .paymentMode)
        period = try container.decode(GrantPeriod.self, forKey: .period)
        periods = try container.decodeIfPresent(Int.self, forKey: .periods) ?? 1
        price = try container.decodeIfPresent(Money.self, forKey: .price)
    }

    /// Why it cannot be App Store Connect's, or nil: a free trial has no price; a paid one a positive price in
    /// `currency` (the product's); only pay as you go spans more than one period.
    func problem(currency: CurrencyCode?) -> String? {
        switch paymentMode {
        case .freeTrial:
            guard price == nil else { return "a free trial has no price" }
        case .payAsYouGo, .payUpFront:
            guard let price, price.amountMinor > 0 else { return "a paid introductory offer needs a positive price" }
            if let currency, price.currency != currency {
                return "its price must be in the product's App Store currency (\(currency.code))"
            }
        }
        let most = paymentMode == .payAsYouGo ? 12 : 1
        guard (1...most).contains(periods) else {
            return most == 1 ? "only pay_as_you_go spans more than one period" : "periods must be 1 to 12"
        }
        return nil
    }
}

/// How a subscription offer is paid: StoreKit's `Product.SubscriptionOffer.PaymentMode`, Apple's `offerDiscountType`.
public enum OfferPaymentMode: String, Codable, Hashable, Sendable, CaseIterable {
    case freeTrial = "free_trial"
    case payAsYouGo = "pay_as_you_go"
    case payUpFront = "pay_up_front"
}
