import ChannelSupport

/// A signed app transaction (`AppTransaction`): who bought the app, on which version.
public struct AppTransaction: Sendable, Hashable {
    /// `Production`, `Sandbox`, `Xcode`, `LocalTesting`.
    public var receiptType: String?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Int64?
    public var originalPurchaseDate: Int64?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?
    public var preorderDate: Int64?
    public var appTransactionId: String?
    public var originalPlatform: String?

    init(_ object: JSONObject) throws(JSONObject.Error) {
        receiptType = try object.optionalString("receiptType")
        appAppleId = try object.optionalInt("appAppleId")
        bundleId = try object.optionalString("bundleId")
        applicationVersion = try object.optionalString("applicationVersion")
        versionExternalIdentifier = try object.optionalInt("versionExternalIdentifier")
        receiptCreationDate = try object.optionalFlooredInt("receiptCreationDate")
        originalPurchaseDate = try object.optionalFlooredInt("originalPurchaseDate")
        originalApplicationVersion = try object.optionalString("originalApplicationVersion")
        deviceVerification = try object.optionalString("deviceVerification")
        deviceVerificationNonce = try object.optionalString("deviceVerificationNonce")
        preorderDate = try object.optionalFlooredInt("preorderDate")
        appTransactionId = try object.optionalString("appTransactionId")
        originalPlatform = try object.optionalString("originalPlatform")
    }
}
