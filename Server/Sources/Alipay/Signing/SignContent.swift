/// Alipay's string to sign: every non-empty parameter except the excluded ones, sorted by name in byte order,
/// as raw (not URL-encoded) `name=value` pairs joined by `&`.
public enum SignContent {
    /// For requests and order strings: everything but `sign`.
    public static let requestExclusions: Set<String> = ["sign"]
    /// For notifications and return URLs: `sign` and `sign_type` are both left out.
    public static let notificationExclusions: Set<String> = ["sign", "sign_type"]

    public static func make(_ parameters: [String: String], excluding: Set<String>) -> String {
        parameters.filter { !$0.value.isEmpty && !excluding.contains($0.key) }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { "\($0.key)=\($0.value)" }
            .joined(separator: "&")
    }
}
