/// Alipay's string to sign: every non-empty parameter except the excluded ones, sorted by name in byte order,
/// as raw (not URL-encoded) `name=value` pairs joined by `&`.
public enum SignContent {
    /// For requests and order strings: everything but `sign`.
    public static let requestExclusions: Set<String> = ["sign"]
    /// For notifications and return URLs: `sign` and `sign_type` are both left out.
    public static let notificationExclusions: Set<String> = ["sign", "sign_type"]

    public static func make(_ parameters: [String: String], excluding: Set<String>) -> String {
        String(decoding: bytes(parameters, excluding: excluding), as: UTF8.self)
    }

    /// The same content as UTF-8 bytes, built in one buffer.
    public static func bytes(_ parameters: [String: String], excluding: Set<String>) -> [UInt8] {
        var names: [String] = []
        names.reserveCapacity(parameters.count)
        var length = 0
        for (name, value) in parameters where !value.isEmpty && !excluding.contains(name) {
            names.append(name)
            length += name.utf8.count + value.utf8.count + 2
        }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var content: [UInt8] = []
        content.reserveCapacity(length)
        for name in names {
            if !content.isEmpty { content.append(UInt8(ascii: "&")) }
            content.append(contentsOf: name.utf8)
            content.append(UInt8(ascii: "="))
            content.append(contentsOf: parameters[name]!.utf8)
        }
        return content
    }
}
