/// A payment channel: how the user pays for an order.
public enum Channel: String, Codable, CaseIterable, Hashable, Sendable {
    /// Apple in-app purchase (StoreKit).
    case appStore = "appstore"
    case alipay
    case wechatPay = "wechatpay"
}
