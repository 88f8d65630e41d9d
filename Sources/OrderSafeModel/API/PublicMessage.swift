/// What a caller outside is told about a failure: no source paths (some libraries put `file:line` in their error
/// descriptions) and at most 300 characters. The whole error stays in the server's log, under the request id.
/// Regex needs iOS 16: the server answers errors, and OrderSafeKit (from iOS 15) only reads them.
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *)
public enum PublicMessage {
    public static let maxLength = 300

    public static func clean(_ text: String) -> String {
        var cleaned = text.replacing(/(?:[A-Za-z]:)?(?:\/[^\s"'\/),]+)+\/[^\s"'\/),]+\.swift(?::\d+)?/, with: "…")
        cleaned = cleaned.replacing(/(?:file|function|line|column): *(?:"[^"]*"|\d+),? */, with: "")
        guard cleaned.count > maxLength else { return cleaned }
        return String(cleaned.prefix(maxLength - 1)) + "…"
    }
}
