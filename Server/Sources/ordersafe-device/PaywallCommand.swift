import ArgumentParser
import Foundation
import OrderSafeKit
import OrderSafeModel

/// `ordersafe-device paywall`: what the app's paywall would show the signed-in user, as one JSON line.
struct PaywallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paywall",
        abstract:
            "Prints what the paywall would show the user (JSON): each product's price, price per period, currency, family sharing, the introductory offer the server says they may have, the offers listed for them, and the storefront."
    )

    @Option(help: "The language of the texts: en or zh-Hans.")
    var language: String = "en"

    @OptionGroup var options: DeviceOptions

    func run() async throws {
        guard let language = MessageLanguage(rawValue: language) else {
            throw ValidationError("--language must be en or zh-Hans")
        }
        var quiet = DeviceSession.Behaviour()
        quiet.printsEvents = false
        let device = try await DeviceSession.open(options, quiet)
        do {
            let paywall = try await device.safe.paywall()
            _ = await device.close()
            Output.line(Output.paywall(paywall, language))
        } catch {
            _ = await device.close()
            Output.line(["user": options.user, "error": "\(error)"])
            throw ExitCode(1)
        }
    }
}

extension Output {
    static func paywall(_ paywall: Paywall, _ language: MessageLanguage) -> [String: Any] {
        func offer(_ terms: StoreSubscriptionOffer) -> [String: Any] {
            [
                "payment_mode": terms.paymentMode.rawValue, "period": terms.period.description,
                "period_count": terms.periodCount, "display_price": terms.displayPrice,
                "terms": terms.terms(in: language),
            ]
        }
        let products = paywall.products.map { item -> [String: Any] in
            var product: [String: Any] = [
                "id": item.id, "title": item.product.title, "kind": item.product.kind.rawValue,
                "channels": item.product.channels.map(\.rawValue),
                "prices": Dictionary(
                    uniqueKeysWithValues: item.product.prices.map {
                        ($0.key.rawValue, ["amount_minor": $0.value.amountMinor, "currency": $0.value.currency.code])
                    }),
                "offers": item.offers.map { listed -> [String: Any] in
                    var described: [String: Any] = [
                        "id": listed.id, "kind": listed.kind.rawValue, "asks_merchant": listed.asksMerchant,
                    ]
                    described["terms"] = listed.terms.map(offer)
                    described["catalog_price"] = listed.catalogPrice.map {
                        ["amount_minor": $0.amountMinor, "currency": $0.currency.code]
                    }
                    return described
                },
            ]
            if let store = item.product.store {
                var described: [String: Any] = [
                    "display_price": store.displayPrice, "currency": store.currencyCode,
                    "family_shareable": store.isFamilyShareable,
                ]
                if let subscription = store.subscription {
                    var terms: [String: Any] = [
                        "group_id": subscription.groupID, "period": subscription.period.description,
                    ]
                    terms["price_per_period"] = item.pricePerPeriod(in: language)
                    described["subscription"] = terms
                }
                product["store"] = described
            }
            product["introductory_offer_eligible"] = item.isEligibleForIntroductoryOffer
            product["introductory_offer"] = item.introductoryOffer.map(offer)
            return product
        }
        var line: [String: Any] = [
            "user": paywall.userID ?? NSNull(), "can_make_payments": paywall.canMakePayments, "products": products,
        ]
        line["storefront"] = paywall.storefront.map { ["country_code": $0.countryCode, "id": $0.id] }
        return line
    }
}
