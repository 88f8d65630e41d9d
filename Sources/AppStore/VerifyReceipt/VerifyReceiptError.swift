/// Why `verifyReceipt` gave no usable answer.
public enum VerifyReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A status Apple documents, after every retry that made sense.
    case status(VerifyReceiptStatus)
    /// Network failure or HTTP 5xx on every attempt.
    case unavailable(String)
    case malformedResponse(String)

    public var isRetryable: Bool {
        switch self {
        case .status(let status): status.isRetryable
        case .unavailable: true
        case .malformedResponse: false
        }
    }

    public var description: String {
        switch self {
        case .status(let status): status.description
        case .unavailable(let detail): "verifyReceipt is unreachable: \(detail)"
        case .malformedResponse(let detail): "verifyReceipt's answer is malformed: \(detail)"
        }
    }
}
