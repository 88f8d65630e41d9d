import ChannelSupport
import Foundation

/// A StoreKit 2 signed transaction's payload (`JWSTransactionDecodedPayload`), with Apple's field names. Dates are
/// milliseconds since 1970 (Xcode's fractional milliseconds rounded down); enumerations keep Apple's raw values, so
/// values Apple adds later are preserved.
public struct JWSTransaction: Sendable, Hashable {
    public var transactionId: String?
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var quantity: Int64?
    /// `type` as signed: `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable`, `Non-Renewing Subscription`
    /// (``type`` is it typed).
    public var rawType: String?
    /// The app's `appAccountToken`: OrderSafe's `order_uuid`.
    public var appAccountToken: UUID?
    /// `inAppOwnershipType` as signed: `PURCHASED` or `FAMILY_SHARED` (``inAppOwnershipType`` is it typed).
    public var rawInAppOwnershipType: String?
    public var signedDate: Int64?
    public var revocationReason: Int64?
    public var revocationDate: Int64?
    public var revocationType: String?
    public var revocationPercentage: Int64?
    public var isUpgraded: Bool?
    public var offerType: Int64?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var environment: String?
    public var storefront: String?
    public var storefrontId: String?
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    /// The price in milli-units of `currency` (10990 is 10.99).
    public var price: Int64?
    public var currency: String?
    public var appTransactionId: String?

    /// The product's type; nil when absent or a value this version does not know (``rawType`` keeps it).
    public var type: ProductType? { rawType.flatMap(ProductType.init(rawValue:)) }
    /// Bought or shared; nil when absent or a value this version does not know (``rawInAppOwnershipType`` keeps it).
    public var inAppOwnershipType: InAppOwnershipType? {
        rawInAppOwnershipType.flatMap(InAppOwnershipType.init(rawValue:))
    }
    public var isFamilyShared: Bool { inAppOwnershipType == .familyShared }

    init(_ object: JSONObject) throws(JSONObject.Error) {
        transactionId = try object.optionalString("transactionId")
        originalTransactionId = try object.optionalString("originalTransactionId")
        webOrderLineItemId = try object.optionalString("webOrderLineItemId")
        bundleId = try object.optionalString("bundleId")
        productId = try object.optionalString("productId")
        subscriptionGroupIdentifier = try object.optionalString("subscriptionGroupIdentifier")
        purchaseDate = try object.optionalFlooredInt("purchaseDate")
        originalPurchaseDate = try object.optionalFlooredInt("originalPurchaseDate")
        expiresDate = try object.optionalFlooredInt("expiresDate")
        quantity = try object.optionalInt("quantity")
        rawType = try object.optionalString("type")
        appAccountToken = try object.optionalString("appAccountToken").flatMap(UUID.init(uuidString:))
        rawInAppOwnershipType = try object.optionalString("inAppOwnershipType")
        signedDate = try object.optionalFlooredInt("signedDate")
        revocationReason = try object.optionalInt("revocationReason")
        revocationDate = try object.optionalFlooredInt("revocationDate")
        revocationType = try object.optionalString("revocationType")
        revocationPercentage = try object.optionalInt("revocationPercentage")
        isUpgraded = try object.optionalBool("isUpgraded")
        offerType = try object.optionalInt("offerType")
        offerIdentifier = try object.optionalString("offerIdentifier")
        offerDiscountType = try object.optionalString("offerDiscountType")
        offerPeriod = try object.optionalString("offerPeriod")
        environment = try object.optionalString("environment")
        storefront = try object.optionalString("storefront")
        storefrontId = try object.optionalString("storefrontId")
        transactionReason = try object.optionalString("transactionReason")
        price = try object.optionalInt("price")
        currency = try object.optionalString("currency")
        appTransactionId = try object.optionalString("appTransactionId")
    }
}
