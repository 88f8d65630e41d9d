import Foundation

/// The merchant's product catalog: a version label and its products, validated as a whole.
public struct Catalog: Codable, Hashable, Sendable {
    /// The merchant's label for this catalog revision (shown by `GET /v1/catalog`).
    public var version: String
    /// Lets digital goods use Alipay or WeChat Pay (only where the merchant is entitled to external payment).
    public var allowExternalPaymentForDigitalGoods: Bool
    public var products: [CatalogProduct]

    /// The highest price a product may have: 10^12 minor units (ten billion yuan), far beyond any in-app or app
    /// payment (Alipay takes at most 100,000,000 yuan in one payment), so sums of prices stay far from overflowing.
    public static let maxPriceMinor: Int64 = 1_000_000_000_000

    enum CodingKeys: String, CodingKey {
        case version, products
        case allowExternalPaymentForDigitalGoods = "allow_external_payment_for_digital_goods"
    }

    public init(version: String, allowExternalPaymentForDigitalGoods: Bool = false, products: [CatalogProduct]) throws {
        self.version = version
        self.allowExternalPaymentForDigitalGoods = allowExternalPaymentForDigitalGoods
        self.products = products
        try validate()
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            version: try container.decode(String.self, forKey: .version),
            allowExternalPaymentForDigitalGoods: try container.decodeIfPresent(
                Bool.self, forKey: .allowExternalPaymentForDigitalGoods) ?? false,
            products: try container.decode([CatalogProduct].self, forKey: .products))
    }

    /// Decodes and validates a catalog file's bytes.
    public init(json data: Data) throws(CatalogError) {
        do {
            self = try JSONDecoder().decode(Catalog.self, from: data)
        } catch let error as CatalogError {
            throw error
        } catch let error as DecodingError {
            throw .malformed(error.readableDescription)
        } catch {
            throw .malformed(String(describing: error))
        }
    }

    /// The product with this id, if the catalog has it.
    public func product(id: String) -> CatalogProduct? {
        products.first { $0.id == id }
    }

    /// The product sold in the App Store under this App Store Connect product id.
    public func product(appStoreProductID: String) -> CatalogProduct? {
        products.first { $0.appStoreProductID == appStoreProductID }
    }

    private func validate() throws(CatalogError) {
        guard !version.isEmpty, version.count <= 64 else {
            throw .invalid(product: nil, reason: "version must be 1 to 64 characters")
        }
        guard !products.isEmpty else { throw .invalid(product: nil, reason: "the catalog has no products") }
        var seenIDs = Set<String>()
        var seenAppStoreIDs = Set<String>()
        for product in products {
            guard seenIDs.insert(product.id).inserted else {
                throw .invalid(product: product.id, reason: "duplicate product id")
            }
            if let appStoreID = product.appStoreProductID, !seenAppStoreIDs.insert(appStoreID).inserted {
                throw .invalid(product: product.id, reason: "app_store_product_id '\(appStoreID)' is used twice")
            }
            try validate(product)
        }
    }

    private func validate(_ product: CatalogProduct) throws(CatalogError) {
        func fail(_ reason: String) -> CatalogError { .invalid(product: product.id, reason: reason) }
        guard Identifier.isValid(product.id) else {
            throw fail("id must be 1 to 64 characters of a-z, 0-9, '_', '.', '-'")
        }
        guard !product.title.trimmingCharacters(in: .whitespaces).isEmpty, product.title.count <= 200 else {
            throw fail("title must be 1 to 200 characters")
        }
        guard !product.channels.isEmpty else { throw fail("channels must not be empty") }
        guard Set(product.channels).count == product.channels.count else {
            throw fail("channels lists a channel twice")
        }
        for channel in product.channels {
            guard let price = product.prices[channel] else {
                throw fail("no price for allowed channel '\(channel.rawValue)'")
            }
            guard price.amountMinor > 0 else { throw fail("price for '\(channel.rawValue)' must be positive") }
            guard price.amountMinor <= Catalog.maxPriceMinor else {
                throw fail("price for '\(channel.rawValue)' must be at most \(Catalog.maxPriceMinor) minor units")
            }
        }
        for channel in product.prices.keys where !product.channels.contains(channel) {
            throw fail("price given for '\(channel.rawValue)', which is not in channels")
        }
        if product.channels.contains(.appStore) {
            guard let appStoreID = product.appStoreProductID, !appStoreID.isEmpty, appStoreID.count <= 255 else {
                throw fail("app_store_product_id is required for the appstore channel")
            }
        }
        if product.goods == .digital, !allowExternalPaymentForDigitalGoods,
            let external = product.channels.first(where: { $0 != .appStore })
        {
            throw fail(
                "digital goods sold in an iOS app must use in-app purchase (App Review guideline 3.1.1); "
                    + "remove '\(external.rawValue)', mark the product physical or service, "
                    + "or set allow_external_payment_for_digital_goods where you are entitled to it")
        }
        if product.kind == .autoRenewableSubscription, product.channels != [.appStore] {
            throw fail("auto-renewable subscriptions are sold through the App Store only")
        }
        guard !product.grants.isEmpty else { throw fail("grants must not be empty") }
        for grant in product.grants {
            guard Identifier.isValid(grant.target) else {
                throw fail("grant target '\(grant.target)' must be 1 to 64 characters of a-z, 0-9, '_', '.', '-'")
            }
            switch grant {
            case .addBalance(_, let amount):
                guard amount > 0 else { throw fail("add_balance amount must be positive") }
            case .unlockEntitlement, .extendEntitlement:
                break
            }
        }
        let hasTimedGrant = product.grants.contains { if case .extendEntitlement = $0 { true } else { false } }
        let isSubscription = product.kind == .autoRenewableSubscription || product.kind == .nonRenewingSubscription
        if isSubscription, !hasTimedGrant {
            throw fail("subscriptions must grant extend_entitlement with a period")
        }
        if let group = product.subscriptionGroup {
            guard product.kind == .autoRenewableSubscription else {
                throw fail("subscription_group is for auto-renewable subscriptions only")
            }
            guard (1...64).contains(group.utf8.count), group.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw fail("subscription_group must be App Store Connect's group id: 1 to 64 digits")
            }
        }
        if let offer = product.introductoryOffer {
            guard product.kind == .autoRenewableSubscription else {
                throw fail("introductory_offer is for auto-renewable subscriptions only")
            }
            if let problem = offer.problem(currency: product.prices[.appStore]?.currency) {
                throw fail("introductory_offer: \(problem)")
            }
        }
        try Self.check(
            product.winBackOffers.map { ($0.id, $0.rule, $0.price) }, of: product, key: "win_back_offers",
            kind: "win-back", limit: 10, fail)
        try Self.check(
            product.promotionalOffers.map { ($0.id, $0.rule, $0.price) }, of: product, key: "promotional_offers",
            kind: "promotional", limit: 20, fail)
        for offer in product.promotionalOffers {
            guard !offer.eligible.isEmpty, Set(offer.eligible).count == offer.eligible.count else {
                throw fail("promotional offer '\(offer.id)' must say who is eligible, each audience once")
            }
            guard !product.winBackOffers.contains(where: { $0.id == offer.id }) else {
                throw fail("offer '\(offer.id)' is listed both as promotional and as win-back")
            }
            if offer.rule.withinDays != nil, !offer.eligible.contains(.expired) {
                throw fail("promotional offer '\(offer.id)' has within_days, which counts from expiry: add expired")
            }
        }
    }

    /// One kind of a product's offers (`key` in the catalog): an auto-renewable subscription's only, at most `limit`,
    /// each id well formed and once; each rule a window of 1 to 3,650 days, a limit of 1 to 1,000 per user, a price
    /// of zero or more.
    private static func check(
        _ offers: [(id: String, rule: OfferRule, price: Money?)], of product: CatalogProduct, key: String,
        kind: String, limit: Int, _ fail: (String) -> CatalogError
    ) throws(CatalogError) {
        guard !offers.isEmpty else { return }
        guard product.kind == .autoRenewableSubscription else {
            throw fail("\(key) are for auto-renewable subscriptions only")
        }
        let ids = offers.map(\.id)
        guard ids.count <= limit, Set(ids).count == ids.count else {
            throw fail("\(key) lists at most \(limit) offers, each id once")
        }
        for (id, rule, price) in offers {
            guard isOfferID(id) else {
                throw fail("\(kind) offer id '\(id.prefix(64))' must be 1 to 64 ASCII letters, digits, '.', '-' or '_'")
            }
            if let days = rule.withinDays, !(1...3650).contains(days) {
                throw fail("offer '\(id)': within_days is 1 to 3650")
            }
            if let perUser = rule.perUser, !(1...1000).contains(perUser) {
                throw fail("offer '\(id)': per_user is 1 to 1000")
            }
            if let price, price.amountMinor < 0 {
                throw fail("offer '\(id)': price must not be negative")
            }
        }
    }

    /// An App Store offer id: 1 to 64 ASCII letters, digits, `.`, `-` or `_`.
    public static func isOfferID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F
            }
    }
}

/// Why a catalog was refused.
public enum CatalogError: Error, Equatable, CustomStringConvertible {
    /// The file is not valid JSON or does not have the catalog's shape.
    case malformed(String)
    /// The catalog parsed but breaks a rule; `product` names the offending product.
    case invalid(product: String?, reason: String)

    public var description: String {
        switch self {
        case .malformed(let detail): "catalog is malformed: \(detail)"
        case .invalid(nil, let reason): "catalog is invalid: \(reason)"
        case .invalid(let product?, let reason): "catalog product '\(product)' is invalid: \(reason)"
        }
    }
}
