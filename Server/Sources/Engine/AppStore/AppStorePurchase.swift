import AppStore
import Foundation
import Ledger
import OrderSafeModel

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
        if transaction.type == SubscriptionSignals.autoRenewable {
            subscriptionSignal = SubscriptionSignals.transaction(transaction)
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
