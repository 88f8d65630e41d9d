import Foundation
import OrderSafeModel
import Testing

@Suite("Catalog validation")
struct CatalogTests {
    static let validProduct = """
        {"id":"coins_60","kind":"consumable","title":"60 Coins","app_store_product_id":"x.coins60",
         "prices":{"appstore":{"amount_minor":600,"currency":"CNY"}},
         "grants":[{"type":"add_balance","balance":"coins","amount":60}]}
        """

    static func catalog(_ products: String...) -> Data {
        Data(#"{"version":"v1","products":[\#(products.joined(separator: ","))]}"#.utf8)
    }

    @Test("a valid catalog decodes with App Store as the default channel")
    func valid() throws {
        let catalog = try Catalog(json: Self.catalog(Self.validProduct))
        let product = try #require(catalog.product(id: "coins_60"))
        #expect(product.channels == [.appStore])
        #expect(product.goods == .digital)
        #expect(product.price(for: .appStore) == Money(amountMinor: 600, currency: .cny))
        #expect(product.price(for: .alipay) == nil)
        #expect(product.grants == [.addBalance(balance: "coins", amount: 60)])
    }

    @Test(
        "each broken rule is reported with the product and the reason",
        arguments: [
            (
                #"{"id":"A B","kind":"consumable","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}]}"#,
                "id must be"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}]}"#,
                "app_store_product_id is required"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":0,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}]}"#,
                "must be positive"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":9223372036854775807,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}]}"#,
                "must be at most 1000000000000 minor units"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","channels":["appstore","alipay"],"app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"},"alipay":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}]}"#,
                "3.1.1"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","goods":"physical","channels":["alipay"],"prices":{"wechatpay":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}]}"#,
                "no price for allowed channel 'alipay'"
            ),
            (
                #"{"id":"a","kind":"non_renewing_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"unlock_entitlement","entitlement":"vip"}]}"#,
                "subscriptions must grant extend_entitlement"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","goods":"service","channels":["alipay"],"prices":{"alipay":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}]}"#,
                "App Store only"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[]}"#,
                "grants must not be empty"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":-5}]}"#,
                "amount must be positive"
            ),
            (
                #"{"id":"a","kind":"consumable","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"add_balance","balance":"c","amount":1}],"promotional_offers":[{"id":"P","eligible":["active"]}]}"#,
                "promotional_offers are for auto-renewable subscriptions only"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"promotional_offers":[{"id":"P","eligible":[]}]}"#,
                "must say who is eligible"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"win_back_offers":["P"],"promotional_offers":[{"id":"P","eligible":["expired"]}]}"#,
                "both as promotional and as win-back"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"promotional_offers":[{"id":"a b","eligible":["active"]}]}"#,
                "must be 1 to 64 ASCII letters"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"win_back_offers":[{"id":"W","within_days":0}]}"#,
                "within_days is 1 to 3650"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"promotional_offers":[{"id":"P","eligible":["active"],"per_user":1001}]}"#,
                "per_user is 1 to 1000"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"promotional_offers":[{"id":"P","eligible":["active"],"within_days":30}]}"#,
                "counts from expiry"
            ),
            (
                #"{"id":"a","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":1,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"win_back_offers":[{"id":"W","price":{"amount_minor":-1,"currency":"CNY"}}]}"#,
                "must not be negative"
            ),
        ])
    func invalid(product: String, reasonFragment: String) {
        do {
            _ = try Catalog(json: Self.catalog(product))
            Issue.record("accepted an invalid product")
        } catch {
            #expect(error.description.contains(reasonFragment), "\(error.description)")
        }
    }

    @Test("duplicate ids and duplicate App Store product ids are refused")
    func duplicates() {
        #expect(throws: CatalogError.invalid(product: "coins_60", reason: "duplicate product id")) {
            try Catalog(json: Self.catalog(Self.validProduct, Self.validProduct))
        }
        let sameAppStoreID = Self.validProduct.replacingOccurrences(of: "\"coins_60\"", with: "\"coins_61\"")
        #expect(throws: CatalogError.self) { try Catalog(json: Self.catalog(Self.validProduct, sameAppStoreID)) }
    }

    @Test(
        "malformed files name the offending path",
        arguments: [
            ("not json", "not valid JSON"),
            (#"{"version":"v1"}"#, "products"),
            (
                #"{"version":"v1","products":[{"id":"a","kind":"gift","title":"t","prices":{},"grants":[]}]}"#,
                "products[0].kind"
            ),
            (
                #"{"version":"v1","products":[{"id":"a","kind":"consumable","title":"t","prices":{"pay-pal":{"amount_minor":1,"currency":"USD"}},"grants":[]}]}"#,
                "'pay-pal' in prices is not a channel name"
            ),
            (#"{"version":"v1","products":[]}"#, "no products"),
        ])
    func malformed(text: String, fragment: String) {
        do {
            _ = try Catalog(json: Data(text.utf8))
            Issue.record("accepted a malformed catalog")
        } catch {
            #expect(error.description.contains(fragment), "\(error.description)")
        }
    }

    @Test("grant periods parse only P<n>D/W/M/Y", arguments: ["P1M", "P30D", "P2W", "P1Y", "P1000D"])
    func periods(text: String) {
        #expect(GrantPeriod(iso8601: text)?.description == text)
    }

    @Test("bad grant periods are refused", arguments: ["1M", "P0M", "P01M", "PM", "P1H", "P1001D", "P-1M", "P1M2"])
    func badPeriods(text: String) {
        #expect(GrantPeriod(iso8601: text) == nil)
    }

    @Test("a catalog survives a JSON round trip unchanged")
    func roundTrip() throws {
        let catalog = try Catalog(json: Self.catalog(Self.validProduct))
        let again = try Catalog(json: try OrderSafeJSON.encoder().encode(catalog))
        #expect(again == catalog)
    }

    @Test(
        "an offer's rule and price read from the catalog, a win-back offer as an id or an object, and survive a round trip"
    )
    func offerRules() throws {
        let product =
            #"{"id":"vip","kind":"auto_renewable_subscription","title":"t","app_store_product_id":"x","prices":{"appstore":{"amount_minor":2500,"currency":"CNY"}},"grants":[{"type":"extend_entitlement","entitlement":"vip","period":"P1M"}],"win_back_offers":["PLAIN",{"id":"RULED","within_days":90,"per_user":1,"price":{"amount_minor":1200,"currency":"CNY"}}],"promotional_offers":[{"id":"ASK","eligible":["never_subscribed","expired"],"within_days":30,"ask_merchant":true}]}"#
        let catalog = try Catalog(json: Self.catalog(product))
        let vip = try #require(catalog.product(id: "vip"))
        #expect(
            vip.winBackOffers == [
                "PLAIN",
                WinBackOffer(
                    id: "RULED", rule: OfferRule(withinDays: 90, perUser: 1),
                    price: Money(amountMinor: 1200, currency: .cny)),
            ])
        #expect(
            vip.promotionalOffers == [
                PromotionalOffer(
                    id: "ASK", eligible: [.neverSubscribed, .expired],
                    rule: OfferRule(withinDays: 30, askMerchant: true))
            ])
        let encoded = try OrderSafeJSON.encoder().encode(catalog)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""PLAIN""#), "a plain win-back offer stays an id")
        #expect(try Catalog(json: encoded) == catalog)
    }
}
