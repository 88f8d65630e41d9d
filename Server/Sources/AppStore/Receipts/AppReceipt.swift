import Crypto
import Foundation

/// A StoreKit 1 app receipt, decoded: its fields under the `verifyReceipt` JSON names, dates in milliseconds.
public struct AppReceipt: Sendable, Hashable {
    /// Field 0: `Production`, `ProductionSandbox`, `Xcode`.
    public var receiptType: String?
    public var bundleID: String
    public var applicationVersion: String?
    public var originalApplicationVersion: String?
    public var receiptCreationDateMS: Int64?
    public var expirationDateMS: Int64?
    /// Field 4, the opaque value; field 5, the SHA-1 the device hash check compares with; field 2's DER.
    var opaque: [UInt8]
    var sha1: [UInt8]
    var bundleIDDER: [UInt8]
    public var inApp: [InAppPurchase]

    /// One purchase (field 17).
    public struct InAppPurchase: Sendable, Hashable {
        public var quantity: Int64?
        public var productID: String?
        public var transactionID: String?
        public var originalTransactionID: String?
        public var purchaseDateMS: Int64?
        public var originalPurchaseDateMS: Int64?
        public var expiresDateMS: Int64?
        public var cancellationDateMS: Int64?
        public var webOrderLineItemID: Int64?
        public var isTrialPeriod: Bool?
        public var isInIntroOfferPeriod: Bool?
        public var promotionalOfferID: String?

        /// `verifyReceipt`'s representation: strings throughout, as Apple sends them.
        public var json: [String: Any] {
            var object: [String: Any] = [:]
            object["quantity"] = quantity.map(String.init)
            object["product_id"] = productID
            object["transaction_id"] = transactionID
            object["original_transaction_id"] = originalTransactionID
            object["purchase_date_ms"] = purchaseDateMS.map(String.init)
            object["original_purchase_date_ms"] = originalPurchaseDateMS.map(String.init)
            object["expires_date_ms"] = expiresDateMS.map(String.init)
            object["cancellation_date_ms"] = cancellationDateMS.map(String.init)
            object["web_order_line_item_id"] = webOrderLineItemID.map(String.init)
            object["is_trial_period"] = isTrialPeriod.map { $0 ? "true" : "false" }
            object["is_in_intro_offer_period"] = isInIntroOfferPeriod.map { $0 ? "true" : "false" }
            object["promotional_offer_id"] = promotionalOfferID
            return object
        }
    }

    /// `verifyReceipt`'s `receipt` object.
    public var json: [String: Any] {
        var object: [String: Any] = ["bundle_id": bundleID, "in_app": inApp.map(\.json)]
        object["receipt_type"] = receiptType
        object["application_version"] = applicationVersion
        object["original_application_version"] = originalApplicationVersion
        object["receipt_creation_date_ms"] = receiptCreationDateMS.map(String.init)
        object["expiration_date_ms"] = expirationDateMS.map(String.init)
        return object
    }

    /// The device check: SHA-1 of the device identifier (16 bytes) ‖ opaque value ‖ the bundle id's DER equals field 5.
    public func matchesDevice(_ identifier: UUID) -> Bool {
        let uuid = identifier.uuid
        var input = withUnsafeBytes(of: uuid) { Array($0) }
        input += opaque
        input += bundleIDDER
        return Array(Insecure.SHA1.hash(data: input)) == sha1
    }
}
