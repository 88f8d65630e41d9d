/// A product's type as a transaction's payload names it (`type`; Apple's `Type`).
public enum ProductType: String, Sendable, Hashable, CaseIterable {
    case autoRenewableSubscription = "Auto-Renewable Subscription"
    case nonConsumable = "Non-Consumable"
    case consumable = "Consumable"
    case nonRenewingSubscription = "Non-Renewing Subscription"
}

/// Whether the buyer bought the product or a family member shares it (`inAppOwnershipType`).
public enum InAppOwnershipType: String, Sendable, Hashable, CaseIterable {
    case purchased = "PURCHASED"
    case familyShared = "FAMILY_SHARED"
}
