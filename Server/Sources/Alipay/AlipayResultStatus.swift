/// The `resultStatus` the Alipay SDK returns to the app. Only a hint: the server never fulfils on it.
public enum AlipayResultStatus: String, Sendable, Hashable, CaseIterable {
    case success = "9000"
    case processing = "8000"
    case failed = "4000"
    case duplicateRequest = "5000"
    case userCancelled = "6001"
    case networkError = "6002"
    case unknown = "6004"

    /// Whether the server should ask Alipay at once (`alipay.trade.query`) instead of waiting for the notification.
    public var requiresServerQuery: Bool {
        switch self {
        case .success, .processing, .networkError, .unknown, .duplicateRequest: true
        case .failed, .userCancelled: false
        }
    }

    public var englishMessage: String {
        switch self {
        case .success: "Payment reported successful; waiting for Alipay's confirmation."
        case .processing: "Payment is being processed; its result will follow."
        case .failed: "Payment failed."
        case .duplicateRequest: "This payment request was already submitted."
        case .userCancelled: "Payment cancelled."
        case .networkError: "Network error during payment; its result is being checked."
        case .unknown: "Payment result unknown; it is being checked with Alipay."
        }
    }

    public var chineseMessage: String {
        switch self {
        case .success: "支付成功，正在等待支付宝确认"
        case .processing: "正在处理中，支付结果未知"
        case .failed: "订单支付失败"
        case .duplicateRequest: "重复请求"
        case .userCancelled: "用户中途取消"
        case .networkError: "网络连接出错，正在查询支付结果"
        case .unknown: "支付结果未知，正在向支付宝查询"
        }
    }
}
