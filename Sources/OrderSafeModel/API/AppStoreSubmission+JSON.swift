import Foundation

// The App Store submission path's JSON, written directly (`JSONText`): `JSONEncoder` for the answer and for the inbox
// copy of the submission was 6.5% of a repeat submission's time in the profile. The bytes are `JSONEncoder`'s
// (`AppStoreSubmissionJSONTests`).

extension AppStoreSubmission {
    /// The submission as the inbox keeps it and keys it: `JSONEncoder` with sorted keys and its default escaping
    /// (slashes too), as every stored entry was written.
    @_spi(OrderSafeServer) public var inboxJSON: [UInt8] {
        var json = JSONText(
            escapingSlashes: true, capacity: 64 + (signedTransaction?.utf8.count ?? 0) + (receipt?.utf8.count ?? 0))
        var separator = "{"
        for (key, value) in [
            ("application_username", applicationUsername), ("receipt", receipt),
            ("signed_transaction", signedTransaction),
            ("transaction_id", transactionID),
        ] {
            guard let value else { continue }
            json.append(separator + "\"" + key + "\":")
            json.append(string: value)
            separator = ","
        }
        json.append(separator == "{" ? "{}" : "}")
        return json.bytes
    }
}

extension AppStoreSubmissionResponse {
    /// The answer's body, as ``OrderSafeJSON/encoder()`` writes it.
    @_spi(OrderSafeServer) public var json: [UInt8] {
        var json = JSONText()
        json.append(#"{"transactions":["#)
        for (index, result) in transactions.enumerated() {
            json.append(index == 0 ? "{" : ",{")
            if let error = result.error {
                json.append(#""error":{"code":"#)
                json.append(string: error.code)
                json.append(#","message":"#)
                json.append(string: error.message)
                json.append("},")
            }
            if let order = result.order {
                json.append(#""order":"#)
                json.append(order: order)
                json.append(",")
            }
            json.append(#""transaction_id":"#)
            json.append(string: result.transactionID)
            json.append(#","verdict":"#)
            json.append(string: result.verdict.rawValue)
            json.append("}")
        }
        json.append(#"],"verdict":"#)
        json.append(string: verdict.rawValue)
        json.append("}")
        return json.bytes
    }
}
