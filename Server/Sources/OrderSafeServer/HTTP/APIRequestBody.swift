import ChannelSupport
import OrderSafeModel

/// A JSON request body of the API: its members are exactly the documented ones (the document says
/// `additionalProperties: false`), so a misspelt or unknown member is a 400, not silently ignored.
protocol APIRequestBody: Decodable {
    static var members: Set<String> { get }
    /// Reads the body from its members directly, for a body whose members are all strings: one strict scan
    /// (``JSONObject``) instead of `JSONDecoder`'s and the member checks' (decoding the App Store submission was 3–5%
    /// of the server's samples under load). `nil`: decoded by `JSONDecoder`.
    static var read: (@Sendable (JSONObject) throws(JSONObject.Error) -> Self)? { get }
}

extension APIRequestBody {
    static var read: (@Sendable (JSONObject) throws(JSONObject.Error) -> Self)? { nil }
}

extension CreateOrderRequest: APIRequestBody {
    static let members: Set<String> = ["product_id", "channel"]
}

extension ClientResultRequest: APIRequestBody {
    static let members: Set<String> = ["result", "detail", "channel"]
}
