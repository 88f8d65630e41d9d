/// A `verifyReceipt` status other than 0, with Apple's meaning in English and Chinese.
public struct VerifyReceiptStatus: Error, Sendable, Hashable, CustomStringConvertible {
    public let code: Int

    public init(_ code: Int) {
        self.code = code
    }

    /// Worth asking again: 21005, 21009, 21100–21199 (Apple's internal errors).
    public var isRetryable: Bool { code == 21005 || code == 21009 || (21100...21199).contains(code) }

    /// The receipt itself is wrong: retrying or switching environment will not help.
    public var isPermanent: Bool { [21000, 21001, 21002, 21003, 21004, 21010].contains(code) }

    public var english: String {
        switch code {
        case 21000: "The request to the App Store was not made using the HTTP POST request method."
        case 21001: "This status code is no longer sent by the App Store."
        case 21002: "The data in the receipt-data property was malformed or the service experienced a temporary issue."
        case 21003: "The receipt could not be authenticated."
        case 21004: "The shared secret you provided does not match the shared secret on file for your account."
        case 21005: "The receipt server was temporarily unable to provide the receipt."
        case 21006: "This receipt is valid but the subscription has expired."
        case 21007:
            "This receipt is from the test environment, but it was sent to the production environment for verification."
        case 21008:
            "This receipt is from the production environment, but it was sent to the test environment for verification."
        case 21009: "Internal data access error."
        case 21010: "The user account cannot be found or has been deleted."
        case 21100...21199: "Internal data access error (\(code))."
        default: "Unknown status \(code)."
        }
    }

    public var chinese: String {
        switch code {
        case 21000: "请求 App Store 时未使用 HTTP POST 方法。"
        case 21001: "App Store 已不再返回此状态码。"
        case 21002: "receipt-data 数据格式错误，或服务遇到临时问题。"
        case 21003: "收据无法通过验证。"
        case 21004: "提供的共享密钥与账户中的共享密钥不一致。"
        case 21005: "收据服务器暂时无法提供收据。"
        case 21006: "收据有效，但订阅已过期。"
        case 21007: "该收据来自测试环境，却被发送到生产环境验证。"
        case 21008: "该收据来自生产环境，却被发送到测试环境验证。"
        case 21009: "内部数据访问错误。"
        case 21010: "找不到该用户账户，或账户已被删除。"
        case 21100...21199: "内部数据访问错误（\(code)）。"
        default: "未知状态码 \(code)。"
        }
    }

    public var description: String { "verifyReceipt status \(code): \(english) / \(chinese)" }
}
