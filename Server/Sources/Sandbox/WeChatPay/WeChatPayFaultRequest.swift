import Foundation

/// Body of `POST /sandbox/wechatpay/faults`: faults for the next notifications and API calls, in order.
///
/// `{"notifications": ["drop", "duplicate", "reorder", "stale_timestamp", "delay_ms:500"],
///   "api": ["server_error", "frequency_limited", "bad_signature", "timeout_ms:3000"], "rotate_certificate": true,
///   "query_lag_seconds": 86400, "bills_now": true}` (from now on, queries see a payment only once it is that old, 0
/// ending it; bills are published at once, today's included, for runs on real time that end with the books)
struct WeChatPayFaultRequest: SandboxBody {
    static let members: Set<String> = ["notifications", "api", "rotate_certificate", "query_lag_seconds", "bills_now"]

    var notifications: [String]?
    var api: [String]?
    var rotate_certificate: Bool?
    var query_lag_seconds: Int?
    var bills_now: Bool?

    /// The query lag asked for, if any: 0 to 7 days.
    func queryLag() throws -> TimeInterval? { try FaultText.queryLag(query_lag_seconds) }

    func notificationFaults() throws -> [WeChatPayNotificationFault] {
        try (notifications ?? []).map { text in
            switch text {
            case "drop": .drop
            case "duplicate": .duplicate
            case "reorder": .reorder
            case "stale_timestamp": .staleTimestamp
            default: .delay(try FaultText.milliseconds(text, prefix: "delay_ms:", known: Self.known))
            }
        }
    }

    func apiFaults() throws -> [WeChatPayAPIFault] {
        try (api ?? []).map { text in
            switch text {
            case "server_error": .serverError
            case "frequency_limited": .frequencyLimited
            case "bad_signature": .badSignature
            default: .timeout(try FaultText.milliseconds(text, prefix: "timeout_ms:", known: Self.known))
            }
        }
    }

    static let known =
        "notifications take drop, duplicate, reorder, stale_timestamp, delay_ms:N; "
        + "api takes server_error, frequency_limited, bad_signature, timeout_ms:N"
}
