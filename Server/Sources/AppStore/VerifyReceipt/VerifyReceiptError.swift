/// Why `verifyReceipt` gave no usable answer.
public enum VerifyReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A status Apple documents, after every retry that made sense.
    case status(VerifyReceiptStatus)
    /// Network failure or HTTP 5xx on every attempt.
    case unavailable(String)
    /// Apple answered an HTTP status (4xx) that says the request itself is wrong: not retried.
    case refused(status: Int)
    case malformedResponse(String)

    public var isRetryable: Bool {
        switch self {
        case .status(let status): status.isRetryable
        case .unavailable: true
        case .refused, .malformedResponse: false
        }
    }

    public var description: String {
        switch self {
        case .status(let status): status.description
        case .unavailable(let detail): "verifyReceipt is unreachable: \(detail)"
        case .refused(let status): "verifyReceipt refused the request with HTTP \(status)"
        case .malformedResponse(let detail): "verifyReceipt's answer is malformed: \(detail)"
        }
    }
}
