import ChannelSupport

/// A subscription's signed renewal information (`JWSRenewalInfoDecodedPayload`), with Apple's field names.
public struct JWSRenewalInfo: Sendable, Hashable {
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    /// 1: will renew; 0: turned off.
    public var autoRenewStatus: Int64?
    public var expirationIntent: Int64?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: Int64?
    public var gracePeriodExpiresDate: Int64?
    public var offerType: Int64?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var signedDate: Int64?
    public var environment: String?
    public var recentSubscriptionStartDate: Int64?
    public var renewalDate: Int64?
    /// Milli-units of `currency`.
    public var renewalPrice: Int64?
    public var currency: String?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?

    init(_ object: JSONObject) throws(JSONObject.Error) {
        originalTransactionId = try object.optionalString("originalTransactionId")
        autoRenewProductId = try object.optionalString("autoRenewProductId")
        productId = try object.optionalString("productId")
        autoRenewStatus = try object.optionalInt("autoRenewStatus")
        expirationIntent = try object.optionalInt("expirationIntent")
        isInBillingRetryPeriod = try object.optionalBool("isInBillingRetryPeriod")
        priceIncreaseStatus = try object.optionalInt("priceIncreaseStatus")
        gracePeriodExpiresDate = try object.optionalFlooredInt("gracePeriodExpiresDate")
        offerType = try object.optionalInt("offerType")
        offerIdentifier = try object.optionalString("offerIdentifier")
        offerDiscountType = try object.optionalString("offerDiscountType")
        offerPeriod = try object.optionalString("offerPeriod")
        signedDate = try object.optionalFlooredInt("signedDate")
        environment = try object.optionalString("environment")
        recentSubscriptionStartDate = try object.optionalFlooredInt("recentSubscriptionStartDate")
        renewalDate = try object.optionalFlooredInt("renewalDate")
        renewalPrice = try object.optionalInt("renewalPrice")
        currency = try object.optionalString("currency")
        eligibleWinBackOfferIds = try object.optionalStrings("eligibleWinBackOfferIds")
        appAccountToken = try object.optionalString("appAccountToken")
        appTransactionId = try object.optionalString("appTransactionId")
    }
}
