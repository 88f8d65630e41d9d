/// App Store Server Notifications V2 `notificationType` values. Unknown values stay readable through
/// ``AppStoreNotification/notificationType`` (raw), so a type Apple adds later is recorded, not lost.
public enum NotificationType: String, Sendable, Hashable, CaseIterable {
    case consumptionRequest = "CONSUMPTION_REQUEST"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case didRenew = "DID_RENEW"
    case expired = "EXPIRED"
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case metadataUpdate = "METADATA_UPDATE"
    case migration = "MIGRATION"
    case offerRedeemed = "OFFER_REDEEMED"
    case oneTimeCharge = "ONE_TIME_CHARGE"
    case priceChange = "PRICE_CHANGE"
    case priceIncrease = "PRICE_INCREASE"
    case refund = "REFUND"
    case refundDeclined = "REFUND_DECLINED"
    case refundReversed = "REFUND_REVERSED"
    case renewalExtended = "RENEWAL_EXTENDED"
    case renewalExtension = "RENEWAL_EXTENSION"
    case rescindConsent = "RESCIND_CONSENT"
    case revoke = "REVOKE"
    case subscribed = "SUBSCRIBED"
    case test = "TEST"
}

/// `subtype` values.
public enum NotificationSubtype: String, Sendable, Hashable, CaseIterable {
    case accepted = "ACCEPTED"
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case billingRecovery = "BILLING_RECOVERY"
    case billingRetry = "BILLING_RETRY"
    case downgrade = "DOWNGRADE"
    case failure = "FAILURE"
    case gracePeriod = "GRACE_PERIOD"
    case initialBuy = "INITIAL_BUY"
    case pending = "PENDING"
    case priceIncrease = "PRICE_INCREASE"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    case resubscribe = "RESUBSCRIBE"
    case summary = "SUMMARY"
    case unreported = "UNREPORTED"
    case upgrade = "UPGRADE"
    case voluntary = "VOLUNTARY"
}

extension AppStoreNotification {
    /// The typed `notificationType`, nil for a type this version does not know.
    public var type: NotificationType? { NotificationType(rawValue: notificationType) }
    public var typedSubtype: NotificationSubtype? { subtype.flatMap(NotificationSubtype.init(rawValue:)) }
}
