/// Why an App Store Server API call failed.
public enum AppStoreServerAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's error body: HTTP status, `errorCode` and `errorMessage`.
    case api(status: Int, code: Int?, message: String)
    /// HTTP 429 through every retry; `retryAfter` is what Apple last asked for, in seconds.
    case rateLimited(retryAfter: Int?)
    /// Network failure or 5xx on every attempt.
    case unavailable(String)
    case malformedResponse(String)
    /// The signing key or request could not be prepared.
    case configuration(String)

    /// Error codes Apple documents as retryable (a new account, app or transaction not yet visible; internal errors).
    static let retryableCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 4_290_000, 5_000_001]

    public var isRetryable: Bool {
        switch self {
        case .api(let status, let code, _): status >= 500 || code.map(Self.retryableCodes.contains) == true
        case .rateLimited, .unavailable: true
        case .malformedResponse, .configuration: false
        }
    }

    public var description: String {
        switch self {
        case .api(let status, let code, let message):
            "App Store Server API error (HTTP \(status), \(code.map(String.init) ?? "-")): \(message)"
        case .rateLimited(let retryAfter):
            "App Store Server API rate limit\(retryAfter.map { ", retry after \($0) s" } ?? "")"
        case .unavailable(let detail): "App Store Server API is unreachable: \(detail)"
        case .malformedResponse(let detail): "App Store Server API answer is malformed: \(detail)"
        case .configuration(let detail): "App Store Server API configuration: \(detail)"
        }
    }
}
