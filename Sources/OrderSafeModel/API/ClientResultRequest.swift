/// Body of `POST /v1/orders/{order_no}/client-result`: what the provider's SDK told the app. A hint only:
/// the server asks the provider before believing anything.
public struct ClientResultRequest: Codable, Hashable, Sendable {
    public enum Result: String, Codable, Hashable, Sendable, CaseIterable {
        /// The SDK reported success (Alipay 9000, WeChat errCode 0).
        case success
        /// Still processing or unknown (Alipay 8000/6004).
        case pending
        /// The user backed out (Alipay 6001, WeChat -2).
        case cancelled
        /// The SDK reported a failure.
        case failed
    }

    public var result: Result
    /// The SDK's own code or message, kept in the order's history (at most 200 characters).
    public var detail: String?
    /// The channel the app paid through. A server whose restored ledger lost the order rebuilds it from that
    /// provider's record of the payment, when it names the signed-in user.
    public var channel: Channel?

    public init(result: Result, detail: String? = nil, channel: Channel? = nil) {
        self.result = result
        self.detail = detail
        self.channel = channel
    }
}
