import ChannelSupport

/// An App Store Server Notification V2 (`ResponseBodyV2DecodedPayload`), with its nested signed transaction and
/// renewal info verified too.
public struct AppStoreNotification: Sendable, Hashable {
    /// `ONE_TIME_CHARGE`, `SUBSCRIBED`, `DID_RENEW`, `REFUND`, `TEST`, … (kept raw: new types are recorded, not lost).
    public var notificationType: String
    public var subtype: String?
    public var notificationUUID: String?
    public var version: String?
    public var signedDate: Int64?
    public var data: NotificationData?
    public var summary: Summary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: AppData?
    /// `data.signedTransactionInfo`, verified.
    public var transaction: JWSTransaction?
    /// `data.signedRenewalInfo`, verified.
    public var renewalInfo: JWSRenewalInfo?

    public struct NotificationData: Sendable, Hashable {
        public var environment: String?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var bundleVersion: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
        public var status: Int64?
        public var consumptionRequestReason: String?

        init(_ object: JSONObject) throws(JSONObject.Error) {
            environment = try object.optionalString("environment")
            appAppleId = try object.optionalInt("appAppleId")
            bundleId = try object.optionalString("bundleId")
            bundleVersion = try object.optionalString("bundleVersion")
            signedTransactionInfo = try object.optionalString("signedTransactionInfo")
            signedRenewalInfo = try object.optionalString("signedRenewalInfo")
            status = try object.optionalInt("status")
            consumptionRequestReason = try object.optionalString("consumptionRequestReason")
        }
    }

    public struct Summary: Sendable, Hashable {
        public var environment: String?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var productId: String?
        public var requestIdentifier: String?
        public var storefrontCountryCodes: [String]?
        public var succeededCount: Int64?
        public var failedCount: Int64?

        init(_ object: JSONObject) throws(JSONObject.Error) {
            environment = try object.optionalString("environment")
            appAppleId = try object.optionalInt("appAppleId")
            bundleId = try object.optionalString("bundleId")
            productId = try object.optionalString("productId")
            requestIdentifier = try object.optionalString("requestIdentifier")
            storefrontCountryCodes = try object.optionalStrings("storefrontCountryCodes")
            succeededCount = try object.optionalInt("succeededCount")
            failedCount = try object.optionalInt("failedCount")
        }
    }

    public struct ExternalPurchaseToken: Sendable, Hashable {
        public var externalPurchaseId: String?
        public var tokenCreationDate: Int64?
        public var appAppleId: Int64?
        public var bundleId: String?

        /// Apple marks sandbox tokens with a `SANDBOX` prefix.
        public var environment: AppStoreEnvironment {
            externalPurchaseId?.hasPrefix("SANDBOX") == true ? .sandbox : .production
        }

        init(_ object: JSONObject) throws(JSONObject.Error) {
            externalPurchaseId = try object.optionalString("externalPurchaseId")
            tokenCreationDate = try object.optionalFlooredInt("tokenCreationDate")
            appAppleId = try object.optionalInt("appAppleId")
            bundleId = try object.optionalString("bundleId")
        }
    }

    public struct AppData: Sendable, Hashable {
        public var environment: String?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var signedAppTransactionInfo: String?

        init(_ object: JSONObject) throws(JSONObject.Error) {
            environment = try object.optionalString("environment")
            appAppleId = try object.optionalInt("appAppleId")
            bundleId = try object.optionalString("bundleId")
            signedAppTransactionInfo = try object.optionalString("signedAppTransactionInfo")
        }
    }

    init(_ object: JSONObject) throws(JSONObject.Error) {
        notificationType = try object.string("notificationType")
        subtype = try object.optionalString("subtype")
        notificationUUID = try object.optionalString("notificationUUID")
        version = try object.optionalString("version")
        signedDate = try object.optionalFlooredInt("signedDate")
        data = try object.optionalObject("data").map(NotificationData.init)
        summary = try object.optionalObject("summary").map(Summary.init)
        externalPurchaseToken = try object.optionalObject("externalPurchaseToken").map(ExternalPurchaseToken.init)
        appData = try object.optionalObject("appData").map(AppData.init)
    }
}
