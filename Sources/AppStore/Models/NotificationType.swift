/// App Store Server Notifications V2 `notificationType` values. Unknown values stay readable through
/// ``AppStoreNotification/notificationType`` (raw), so a type Apple adds later is recorded, not lost.
public enum NotificationType: String, Sendable, Hashable, CaseIterable {
    case consumptionRequest = "CONSUMPTION_REQUEST", didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS", didFailToRenew = "DID_FAIL_TO_RENEW", didRenew = "DID_RENEW"
    case expired = "EXPIRED", externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN", gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case metadataUpdate = "METADATA_UPDATE", migration = "MIGRATION", offerRedeemed = "OFFER_REDEEMED", oneTimeCharge = "ONE_TIME_CHARGE"
    case priceChange = "PRICE_CHANGE", priceIncrease = "PRICE_INCREASE", refund = "REFUND", refundDeclined = "REFUND_DECLINED"
    case refundReversed = "REFUND_REVERSED", renewalExtended = "RENEWAL_EXTENDED", renewalExtension = "RENEWAL_EXTENSION"
    case rescindConsent = "RESCIND_CONSENT", revoke = "REVOKE", subscribed = "SUBSCRIBED", test = "TEST"
}

/// `subtype` values.
public enum NotificationSubtype: String, Sendable, Hashable, CaseIterable {
    case accepted = "ACCEPTED", autoRenewDisabled = "AUTO_RENEW_DISABLED", autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case billingRecovery = "BILLING_RECOVERY", billingRetry = "BILLING_RETRY", downgrade = "DOWNGRADE", failure = "FAILURE"
    case gracePeriod = "GRACE_PERIOD", initialBuy = "INITIAL_BUY", pending = "PENDING", priceIncrease = "PRICE_INCREASE"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE", resubscribe = "RESUBSCRIBE", summary = "SUMMARY", unreported = "UNREPORTED"
    case upgrade = "UPGRADE", voluntary = "VOLUNTARY"
}

extension AppStoreNotification {
    /// The typed `notificationType`, nil for a type this version does not know.
    public var type: NotificationType? { NotificationType(rawValue: notificationType) }
    public var typedSubtype: NotificationSubtype? { subtype.flatMap(NotificationSubtype.init(rawValue:)) }
}
