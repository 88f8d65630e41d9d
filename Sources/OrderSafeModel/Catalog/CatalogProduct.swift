/// One product a merchant sells, as the catalog file defines it.
public struct CatalogProduct: Codable, Hashable, Sendable, Identifiable {
    /// The merchant's product id (`[a-z0-9_.-]`, at most 64 characters).
    public var id: String
    public var kind: ProductKind
    public var title: String
    public var goods: GoodsType
    /// The App Store Connect product id; required when `channels` contains `appstore`.
    public var appStoreProductID: String?
    /// Channels the product may be bought through.
    public var channels: [Channel]
    /// The order amount for each allowed channel.
    public var prices: [Channel: Money]
    public var grants: [Grant]
    /// The App Store win-back offers of an auto-renewable subscription (their offer ids in App Store Connect, each
    /// with its rule), which the server lists to a subscriber whose subscription expired and signs on request.
    public var winBackOffers: [WinBackOffer]
    /// The App Store promotional offers of an auto-renewable subscription, each with who may have it.
    public var promotionalOffers: [PromotionalOffer]
    /// An auto-renewable subscription's group in App Store Connect (`subscriptionGroupIdentifier`): which
    /// subscriptions a user's introductory offer counts across. Unset, only the product's own history counts.
    public var subscriptionGroup: String?
    /// An auto-renewable subscription's introductory offer as App Store Connect has it set up.
    public var introductoryOffer: IntroductoryOffer?

    public init(
        id: String, kind: ProductKind, title: String, goods: GoodsType = .digital, appStoreProductID: String? = nil,
        channels: [Channel], prices: [Channel: Money], grants: [Grant], winBackOffers: [WinBackOffer] = [],
        promotionalOffers: [PromotionalOffer] = [], subscriptionGroup: String? = nil,
        introductoryOffer: IntroductoryOffer? = nil
    ) {
        self.subscriptionGroup = subscriptionGroup
        self.introductoryOffer = introductoryOffer
        self.winBackOffers = winBackOffers
        self.promotionalOffers = promotionalOffers
        self.id = id
        self.kind = kind
        self.title = title
        self.goods = goods
        self.appStoreProductID = appStoreProductID
        self.channels = channels
        self.prices = prices
        self.grants = grants
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, title, goods, channels, prices, grants
        case appStoreProductID = "app_store_product_id"
        case winBackOffers = "win_back_offers"
        case promotionalOffers = "promotional_offers"
        case subscriptionGroup = "subscription_group"
        case introductoryOffer = "introductory_offer"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        kind = try container.decode(ProductKind.self, forKey: .kind)
        title = try container.decode(String.self, forKey: .title)
        goods = try container.decodeIfPresent(GoodsType.self, forKey: .goods) ?? .digital
        appStoreProductID = try container.decodeIfPresent(String.self, forKey: .appStoreProductID)
        channels = try container.decodeIfPresent([Channel].self, forKey: .channels) ?? [.appStore]
        let rawPrices = try container.decode([String: Money].self, forKey: .prices)
        var prices: [Channel: Money] = [:]
        for (key, money) in rawPrices {
            guard let channel = Channel(rawValue: key) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .prices, in: container,
                    debugDescription:
                        "'\(key.prefix(Channel.maxNameLength))' in prices is not a channel name (such as "
                        + Channel.builtIn.map(\.rawValue).joined(separator: ", ") + ")")
            }
            prices[channel] = money
        }
        self.prices = prices
        grants = try container.decode([Grant].self, forKey: .grants)
        winBackOffers = try container.decodeIfPresent([WinBackOffer].self, forKey: .winBackOffers) ?? []
        promotionalOffers = try container.decodeIfPresent([PromotionalOffer].self, forKey: .promotionalOffers) ?? []
        subscriptionGroup = try container.decodeIfPresent(String.self, forKey: .subscriptionGroup)
        introductoryOffer = try container.decodeIfPresent(IntroductoryOffer.self, forKey: .introductoryOffer)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(title, forKey: .title)
        try container.encode(goods, forKey: .goods)
        try container.encodeIfPresent(appStoreProductID, forKey: .appStoreProductID)
        try container.encode(channels, forKey: .channels)
        try container.encode(
            Dictionary(uniqueKeysWithValues: prices.map { ($0.key.rawValue, $0.value) }), forKey: .prices)
        try container.encode(grants, forKey: .grants)
        if !winBackOffers.isEmpty { try container.encode(winBackOffers, forKey: .winBackOffers) }
        if !promotionalOffers.isEmpty { try container.encode(promotionalOffers, forKey: .promotionalOffers) }
        try container.encodeIfPresent(subscriptionGroup, forKey: .subscriptionGroup)
        try container.encodeIfPresent(introductoryOffer, forKey: .introductoryOffer)
    }

    /// The price when bought through `channel`, if the product allows that channel.
    public func price(for channel: Channel) -> Money? {
        channels.contains(channel) ? prices[channel] : nil
    }
}
