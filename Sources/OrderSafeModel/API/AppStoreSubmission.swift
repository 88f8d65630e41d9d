/// Body of `POST /v1/appstore/transactions`: a StoreKit 2 signed transaction, or a StoreKit 1 receipt (base64)
/// with optionally the transaction id the app is finishing and the payment's `applicationUsername`.
public struct AppStoreSubmission: Codable, Hashable, Sendable {
    public var signedTransaction: String?
    public var receipt: String?
    public var transactionID: String?
    /// StoreKit 1 `SKPayment.applicationUsername`: the order UUID, or the legacy `"userID#orderNo"`.
    public var applicationUsername: String?

    public init(
        signedTransaction: String? = nil, receipt: String? = nil, transactionID: String? = nil,
        applicationUsername: String? = nil
    ) {
        self.signedTransaction = signedTransaction
        self.receipt = receipt
        self.transactionID = transactionID
        self.applicationUsername = applicationUsername
    }

    enum CodingKeys: String, CodingKey {
        case signedTransaction = "signed_transaction"
        case receipt
        case transactionID = "transaction_id"
        case applicationUsername = "application_username"
    }
}

/// What the app does with a submitted App Store transaction.
public enum AppStoreVerdict: String, Codable, Hashable, Sendable {
    /// The server recorded it (now or before; as refunded or revoked; or for its owner when another account
    /// submitted it): finish the transaction — the one whose id the result names, no other.
    case recorded
    /// Not recordable (not a transaction, a refuted signature, a receipt that does not hold it): keep it unfinished.
    case rejected
}

/// One transaction's outcome.
public struct AppStoreTransactionResult: Codable, Hashable, Sendable {
    public var transactionID: String
    public var verdict: AppStoreVerdict
    /// The order it was recorded against (for `recorded`).
    public var order: Order?
    /// Why it was rejected (for `rejected`).
    public var error: APIErrorResponse.Detail?

    public init(
        transactionID: String, verdict: AppStoreVerdict, order: Order? = nil, error: APIErrorResponse.Detail? = nil
    ) {
        self.transactionID = transactionID
        self.verdict = verdict
        self.order = order
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case verdict, order, error
    }
}

/// Body answered by `POST /v1/appstore/transactions` (200). A retryable failure is an error response instead
/// (5xx, among them 503 `transaction_held`, or 409): the app keeps the transaction unfinished and submits it again
/// later.
public struct AppStoreSubmissionResponse: Codable, Hashable, Sendable {
    /// `recorded` when every transaction was recorded, else `rejected`.
    public var verdict: AppStoreVerdict
    public var transactions: [AppStoreTransactionResult]

    public init(transactions: [AppStoreTransactionResult]) {
        self.transactions = transactions
        verdict = transactions.allSatisfy { $0.verdict == .recorded } ? .recorded : .rejected
    }
}

/// Body of `POST /v1/appstore/sync` (restore): what the app holds now — StoreKit 2 `Transaction.currentEntitlements`
/// as signed transactions (at most 100), and/or the StoreKit 1 receipt.
public struct AppStoreSyncRequest: Codable, Hashable, Sendable {
    public var signedTransactions: [String]?
    public var receipt: String?

    public init(signedTransactions: [String]? = nil, receipt: String? = nil) {
        self.signedTransactions = signedTransactions
        self.receipt = receipt
    }

    enum CodingKeys: String, CodingKey {
        case signedTransactions = "signed_transactions"
        case receipt
    }
}
