/// A provider notification as a simulator keeps it until the merchant acknowledges it: sent again from the first
/// attempt of the provider's schedule when the simulator starts again on its folder.
struct SandboxNotice: Codable, Sendable {
    var id: String
    var url: String
    /// The body as sent (signed, for Alipay; WeChat Pay's headers are signed again when it is sent again).
    var body: String
    /// WeChat Pay's `event_type`; nil for Alipay.
    var eventType: String? = nil
}
