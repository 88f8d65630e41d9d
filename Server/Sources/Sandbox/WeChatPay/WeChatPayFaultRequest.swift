import Foundation

/// Body of `POST /sandbox/wechatpay/faults`: faults for the next notifications and API calls, in order.
///
/// `{"notifications": ["drop", "duplicate", "reorder", "stale_timestamp", "delay_ms:500"],
///   "api": ["server_error", "frequency_limited", "bad_signature", "timeout_ms:3000"], "rotate_certificate": true}`
struct WeChatPayFaultRequest: SandboxBody {
    static let members: Set<String> = ["notifications", "api", "rotate_certificate"]

    var notifications: [String]?
    var api: [String]?
    var rotate_certificate: Bool?

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
