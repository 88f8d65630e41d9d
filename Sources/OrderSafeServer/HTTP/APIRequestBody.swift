import OrderSafeModel

/// A JSON request body of the API: its members are exactly the documented ones (the document says
/// `additionalProperties: false`), so a misspelt or unknown member is a 400, not silently ignored.
protocol APIRequestBody: Decodable {
    static var members: Set<String> { get }
}

extension CreateOrderRequest: APIRequestBody {
    static let members: Set<String> = ["product_id", "channel"]
}

extension ClientResultRequest: APIRequestBody {
    static let members: Set<String> = ["result", "detail"]
}

extension AppStoreSubmission: APIRequestBody {
    static let members: Set<String> = ["signed_transaction", "receipt", "transaction_id", "application_username"]
}

extension AppStoreSyncRequest: APIRequestBody {
    static let members: Set<String> = ["signed_transactions", "receipt"]
}
