/// Why a gateway call failed. Business answers such as "trade does not exist" are results, not errors.
public enum AlipayGatewayError: Error, Equatable, CustomStringConvertible {
    /// The network failed or Alipay answered 5xx, on every attempt.
    case unavailable(String)
    /// Alipay answered an HTTP status (4xx) that says the request itself is wrong: not retried.
    case refused(status: Int)
    /// The response is not the JSON Alipay sends.
    case malformedResponse(String)
    /// The response's signature does not verify: never trust its content.
    case badSignature
    /// A system error (`20000`, `aop.*`, `isp.*`) that persisted through every retry.
    case systemError(code: String, subCode: String?, message: String)
    /// A business refusal, e.g. `ACQ.TRADE_HAS_FINISHED`; retrying will not help.
    case business(code: String, subCode: String, message: String)

    public var description: String {
        switch self {
        case .unavailable(let detail): "Alipay is unreachable: \(detail)"
        case .refused(let status): "Alipay refused the request with HTTP \(status)"
        case .malformedResponse(let detail): "Alipay's response is malformed: \(detail)"
        case .badSignature: "Alipay's response signature does not verify"
        case .systemError(let code, let subCode, let message):
            "Alipay system error \(code)/\(subCode ?? "-"): \(message)"
        case .business(let code, let subCode, let message): "Alipay refused (\(code)/\(subCode)): \(message)"
        }
    }

    /// Worth retrying later (reconciliation does).
    public var isRetryable: Bool {
        switch self {
        case .unavailable, .systemError: true
        case .refused, .malformedResponse, .badSignature, .business: false
        }
    }
}
