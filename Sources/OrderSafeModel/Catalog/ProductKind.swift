/// What kind of in-app product this is, in App Store terms.
public enum ProductKind: String, Codable, CaseIterable, Hashable, Sendable {
    case consumable
    case nonConsumable = "non_consumable"
    case autoRenewableSubscription = "auto_renewable_subscription"
    case nonRenewingSubscription = "non_renewing_subscription"
}

/// Whether the product is a digital good consumed in the app (App Review guideline 3.1.1) or something else.
public enum GoodsType: String, Codable, CaseIterable, Hashable, Sendable {
    /// Digital content or features used in the app: in-app purchase only, unless the catalog says otherwise.
    case digital
    /// Physical goods delivered outside the app.
    case physical
    /// Services consumed outside the app (rides, bookings, consultations).
    case service
}
