import Foundation

/// Sandbox-only credentials generated on first start and kept in the data folder (mode 0600),
/// so `serve` and `ordersafe token` agree without any setup.
public enum DevelopmentCredentials {
    /// The configured secret, or in the sandbox one read from (or created in) `dataDirectory/name`.
    public static func resolve(configured: String?, name: String, settings: Settings.Server) throws -> String? {
        if let configured { return configured }
        guard settings.environment == .sandbox else { return nil }
        let url = URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent(name)
        if let data = FileManager.default.contents(atPath: url.path),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            text.count >= 32
        {
            return text
        }
        try FileManager.default.createDirectory(
            atPath: settings.dataDirectory, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let secret = bytes.map { String(format: "%02x", $0) }.joined()
        guard
            FileManager.default.createFile(
                atPath: url.path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw SettingsError(key: "server.data_dir", reason: "cannot write \(url.path)") }
        return secret
    }
}
