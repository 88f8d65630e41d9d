import Foundation

/// Body of `POST /v1/appstore/app-transaction`: the app's `AppTransaction.shared` as StoreKit signed it
/// (`jwsRepresentation`).
public struct AppTransactionSubmission: Codable, Hashable, Sendable {
    public var signedAppTransaction: String

    public init(signedAppTransaction: String) {
        self.signedAppTransaction = signedAppTransaction
    }

    enum CodingKeys: String, CodingKey {
        case signedAppTransaction = "signed_app_transaction"
    }
}

/// Body of `GET` and `POST /v1/appstore/app-transaction`: each purchase of the app itself (one per Apple ID) the
/// user's phones have shown the server, earliest original purchase first: the version first bought tells a paid
/// app's buyers from those who came after it went free.
public struct AppPurchasesResponse: Codable, Hashable, Sendable {
    public var userID: String
    public var purchases: [AppPurchase]

    public init(userID: String, purchases: [AppPurchase]) {
        self.userID = userID
        self.purchases = purchases
    }

    /// The app version the user first had, across their Apple IDs (the earliest original purchase's).
    public var originalApplicationVersion: String? { purchases.first?.originalApplicationVersion }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case purchases
    }
}

/// One Apple ID's purchase (or download) of the app, as its signed `AppTransaction` said.
public struct AppPurchase: Codable, Hashable, Sendable {
    /// Apple's `appTransactionId`: one per Apple ID and app.
    public var appTransactionID: String
    /// The app version first bought or downloaded (`CFBundleVersion`; "1.0" in the sandbox).
    public var originalApplicationVersion: String
    public var originalPurchaseDate: Date?
    /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`.
    public var environment: String

    public init(
        appTransactionID: String, originalApplicationVersion: String, originalPurchaseDate: Date?, environment: String
    ) {
        self.appTransactionID = appTransactionID
        self.originalApplicationVersion = originalApplicationVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.environment = environment
    }

    enum CodingKeys: String, CodingKey {
        case appTransactionID = "app_transaction_id"
        case originalApplicationVersion = "original_application_version"
        case originalPurchaseDate = "original_purchase_date"
        case environment
    }
}
