import OrderSafeKit

/// One product as the sample paywall shows it: what App Review's guideline 3.1.2 asks beside the price, and whether
/// its button waits for a purchase on its way.
public struct PaywallRow: Identifiable, Hashable, Sendable {
    /// The catalog product's id (what the buy buttons buy).
    public var id: String
    public var title: String
    /// The price per period of a subscription (`CNY 25.00 / month`), else the store's price, else the catalog's.
    public var price: String
    /// The introductory offer the user would get, with what follows it (`Free for 1 week, then CNY 25.00 / month`).
    public var introductoryOffer: String?
    /// The offers the server lists for the user, each a button.
    public var offers: [OfferButton]
    /// A subscription's renewal terms, which 3.1.2 asks to show before the purchase.
    public var renewalTerms: String?
    /// A purchase of it is on its way: its buttons are disabled.
    public var isBuying: Bool
    /// The channels its buy buttons pay through.
    public var channels: [Channel]
}

/// A subscription offer's button.
public struct OfferButton: Identifiable, Hashable, Sendable {
    /// The offer's id in App Store Connect (what `purchase(_:offer:)` takes).
    public var id: String
    public var label: String
}

/// The sample's presentation: the paywall and the model's state made into rows, the same for both SwiftUI models.
public enum PaywallRows {
    public static func rows(_ paywall: Paywall, state: OrderSafeModelState, language: MessageLanguage)
        -> [PaywallRow]
    {
        paywall.products.map { item in
            let perPeriod = item.pricePerPeriod(in: language)
            let price =
                perPeriod ?? item.product.store?.displayPrice
                ?? item.product.prices.values.first.map { "\($0.currency.code) \($0.decimalString)" } ?? ""
            return PaywallRow(
                id: item.id, title: item.product.title, price: price,
                introductoryOffer: item.introductoryOffer.map { offer in
                    perPeriod.map { offer.terms(in: language) + ", then " + $0 } ?? offer.terms(in: language)
                },
                offers: item.offers.map { offer in
                    OfferButton(
                        id: offer.id,
                        label: offer.terms?.terms(in: language)
                            ?? offer.catalogPrice.map { "\($0.currency.code) \($0.decimalString)" } ?? offer.id)
                },
                renewalTerms: perPeriod.map {
                    "Renews automatically at \($0) until cancelled in Settings at least 24 hours before the period ends."
                },
                isBuying: state.isPurchasing(item.id), channels: item.product.channels)
        }
    }
}
