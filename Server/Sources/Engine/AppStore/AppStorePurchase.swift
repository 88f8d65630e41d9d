import AppStore
import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

/// One verified App Store transaction, whichever way it arrived (StoreKit 2 JWS, a StoreKit 1 receipt entry, a
/// notification), reduced to what binding and fulfilment need.
struct AppStorePurchase: Sendable {
    var transactionID: String
    var originalTransactionID: String
    var productID: String
    /// StoreKit 2 `appAccountToken`, or a StoreKit 1 `applicationUsername` that is a UUID: the order's UUID.
    var orderUUID: UUID?
    /// A legacy StoreKit 1 `applicationUsername` of the form `"userID#orderNo"`.
    var legacyBinding: (userID: String, orderNo: String)?
    var familyShared: Bool
    /// Set when Apple refunded or revoked it.
    var revoked: Bool
    /// Where the subscription period it bought ends, as Apple dates it (`expiresDate`); nil for other products.
    var periodEnd: Date?
    /// Apple's Sandbox environment: a test purchase (App Review, TestFlight, a tester), paid with no money.
    var sandbox = false
    /// What it says of its auto-renewable subscription (a StoreKit 2 transaction of one); nil otherwise.
    var subscriptionSignal: SubscriptionSignal?
    /// What the App Store charged (`price`, `currency`): its storefront's price, or an offer's; nil when Apple does
    /// not say (a StoreKit 1 receipt), and the catalog's price is recorded.
    var charged: Money?
    /// The offer the buyer took, as ``VerifiedPayment/offer`` names it.
    var offer: String?

    init?(_ transaction: JWSTransaction) {
        guard let id = transaction.transactionId, let product = transaction.productId else { return nil }
        transactionID = id
        originalTransactionID = transaction.originalTransactionId ?? id
        productID = product
        orderUUID = transaction.isFamilyShared ? nil : transaction.appAccountToken
        familyShared = transaction.isFamilyShared
        revoked = transaction.revocationDate != nil
        periodEnd = transaction.expiresDate.map(Date.init(millisecondsSince1970:))
        sandbox = transaction.environment == AppStoreEnvironment.sandbox.rawValue
        if transaction.type == .autoRenewableSubscription {
            subscriptionSignal = SubscriptionSignals.transaction(transaction)
        }
        charged = Self.charged(transaction)
        offer = Self.offer(transaction)
    }

    /// `price` (milli-units of `currency`: "10990 is 10.99", JWSTransactionDecodedPayload) in minor units; nil when
    /// Apple does not say, or says a fraction of one.
    static func charged(_ transaction: JWSTransaction) -> Money? {
        guard let price = transaction.price, price >= 0, let code = transaction.currency,
            let currency = CurrencyCode(code)
        else { return nil }
        var divisor: Int64 = 1
        for _ in currency.minorUnitDigits..<3 { divisor *= 10 }
        guard price % divisor == 0 else { return nil }
        return Money(amountMinor: price / divisor, currency: currency)
    }

    /// The offer `offerType` and `offerIdentifier` name (1 introductory, 2 promotional, 3 offer code, 4 win-back:
    /// https://developer.apple.com/documentation/appstoreserverapi/offertype); nil for none, or a type this version
    /// does not know (recorded as `offer_type:N`).
    static func offer(_ transaction: JWSTransaction) -> String? {
        guard let type = transaction.offerType else { return nil }
        let id = transaction.offerIdentifier.map { ":" + String($0.prefix(64)) } ?? ""
        switch type {
        case 1: return "introductory"
        case 2: return "promotional" + id
        case 3: return "offer_code" + id
        case 4: return "win_back" + id
        default: return "offer_type:\(type)"
        }
    }

    init?(_ entry: AppReceipt.InAppPurchase, applicationUsername: String?) {
        guard let id = entry.transactionID, let product = entry.productID else { return nil }
        transactionID = id
        originalTransactionID = entry.originalTransactionID ?? id
        productID = product
        familyShared = false
        revoked = entry.cancellationDateMS != nil
        periodEnd = entry.expiresDateMS.map(Date.init(millisecondsSince1970:))
        if let name = applicationUsername {
            if let uuid = UUID(uuidString: name) {
                orderUUID = uuid
            } else if let hash = name.firstIndex(of: "#"), hash != name.startIndex,
                name.index(after: hash) != name.endIndex
            {
                legacyBinding = (String(name[..<hash]), String(name[name.index(after: hash)...]))
            }
        }
    }
}
