/// Why a WeChat Pay API call failed. "No such order yet" is a result (`.notFound`), not an error.
public enum WeChatPayAPIError: Error, Equatable, CustomStringConvertible {
    /// The network failed, the call timed out, or WeChat Pay answered 5xx, on every attempt.
    case unavailable(String)
    /// `SYSTEM_ERROR`, `FREQUENCY_LIMITED` (429) and the like, through every retry.
    case systemError(status: Int, code: String, message: String)
    /// A business refusal (`PARAM_ERROR`, `ORDER_CLOSED`, `NOT_ENOUGH`, …): retrying will not help.
    case business(status: Int, code: String, message: String)
    /// The answer is not what WeChat Pay sends.
    case malformedResponse(String)
    /// The answer's signature, timestamp or serial failed verification: never trust its content.
    case verification(WeChatPayError)
    /// A downloaded bill does not match its `hash_value`.
    case billHashMismatch

    public var description: String {
        switch self {
        case .unavailable(let detail): "WeChat Pay is unreachable: \(detail)"
        case .systemError(let status, let code, let message):
            "WeChat Pay system error (HTTP \(status) \(code)): \(message)"
        case .business(let status, let code, let message): "WeChat Pay refused (HTTP \(status) \(code)): \(message)"
        case .malformedResponse(let detail): "WeChat Pay's answer is malformed: \(detail)"
        case .verification(let error): "WeChat Pay's answer failed verification: \(error)"
        case .billHashMismatch: "the downloaded bill does not match its hash_value"
        }
    }

    /// Worth trying again later (reconciliation does).
    public var isRetryable: Bool {
        switch self {
        case .unavailable, .systemError: true
        case .business, .malformedResponse, .verification, .billHashMismatch: false
        }
    }

    /// The error codes WeChat Pay documents as transient.
    static let retryableCodes: Set<String> = ["SYSTEM_ERROR", "SYSTEMERROR", "FREQUENCY_LIMITED", "BANK_ERROR"]
}
