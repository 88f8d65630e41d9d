import ChannelSupport
import OrderSafeModel

extension AppStoreSubmission: APIRequestBody {
    static let members: Set<String> = ["signed_transaction", "receipt", "transaction_id", "application_username"]
    static let read: (@Sendable (JSONObject) throws(JSONObject.Error) -> AppStoreSubmission)? = {
        object throws(JSONObject.Error) in
        AppStoreSubmission(
            signedTransaction: try object.optionalString("signed_transaction"),
            receipt: try object.optionalString("receipt"),
            transactionID: try object.optionalString("transaction_id"),
            applicationUsername: try object.optionalString("application_username"))
    }
}

extension AppStoreSyncRequest: APIRequestBody {
    static let members: Set<String> = ["signed_transactions", "receipt"]
}
