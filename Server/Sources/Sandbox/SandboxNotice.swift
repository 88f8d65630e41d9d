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

extension SandboxNotice {
    /// The journal's form of a notice on its way.
    init(_ notice: CourierNotice) {
        self.init(
            id: notice.id, url: notice.url, body: String(decoding: notice.body, as: UTF8.self),
            eventType: notice.eventType)
    }

    /// The notice about `outTradeNo` as the courier sends it, with `headers` beside the body.
    func courierNotice(about outTradeNo: String, headers: [String: String] = [:]) -> CourierNotice {
        CourierNotice(
            id: id, url: url, outTradeNo: outTradeNo, eventType: eventType, headers: headers, body: Array(body.utf8))
    }
}
