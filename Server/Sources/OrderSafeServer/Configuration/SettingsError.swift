/// A setting that is missing or wrong, named by its configuration key and its environment variable.
public struct SettingsError: Error, CustomStringConvertible, Equatable {
    /// The dotted key, e.g. `server.port`.
    public var key: String
    public var reason: String

    public init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    /// The environment variable that sets `key`, e.g. `ORDERSAFE_SERVER_PORT`.
    public var environmentVariable: String {
        "ORDERSAFE_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    public var description: String { "configuration \(key) (\(environmentVariable)): \(reason)" }
}
