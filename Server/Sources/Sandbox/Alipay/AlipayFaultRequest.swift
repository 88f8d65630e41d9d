import Foundation

/// Body of `POST /sandbox/alipay/faults`: faults for the next notifications and gateway calls, in order.
///
/// `{"notifications": ["drop", "duplicate", "reorder", "tamper", "delay_ms:500"],
///   "gateway": ["server_error", "system_error", "bad_signature", "timeout_ms:3000"], "query_lag_seconds": 86400,
///   "bills_now": true}` (from now on, queries see a payment only once it is that old, 0 ending it; bills are
/// published at once, today's included, for runs on real time that end with the books)
struct AlipayFaultRequest: SandboxBody {
    static let members: Set<String> = ["notifications", "gateway", "query_lag_seconds", "bills_now"]

    var notifications: [String]?
    var gateway: [String]?
    var query_lag_seconds: Int?
    var bills_now: Bool?

    /// The query lag asked for, if any: 0 to 7 days.
    func queryLag() throws -> TimeInterval? { try FaultText.queryLag(query_lag_seconds) }

    func notificationFaults() throws -> [AlipayNotificationFault] {
        try (notifications ?? []).map { text in
            switch text {
            case "drop": .drop
            case "duplicate": .duplicate
            case "reorder": .reorder
            case "tamper": .tamper
            default: .delay(try FaultText.milliseconds(text, prefix: "delay_ms:", known: Self.known))
            }
        }
    }

    func gatewayFaults() throws -> [AlipayGatewayFault] {
        try (gateway ?? []).map { text in
            switch text {
            case "server_error": .serverError
            case "system_error": .systemError
            case "bad_signature": .badSignature
            case "short_refund": .shortRefund
            default: .timeout(try FaultText.milliseconds(text, prefix: "timeout_ms:", known: Self.known))
            }
        }
    }

    static let known =
        "notifications take drop, duplicate, reorder, tamper, delay_ms:N; "
        + "gateway takes server_error, system_error, bad_signature, short_refund, timeout_ms:N"
}
