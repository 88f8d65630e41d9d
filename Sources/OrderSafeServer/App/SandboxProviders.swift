import Alipay
import Foundation
import Hummingbird
import Logging
import Sandbox
import _CryptoExtras

/// The built-in provider simulators `serve` runs in the sandbox when no real account is configured, with their
/// keys generated on first start and kept in the data folder.
struct SandboxProviders {
    static let alipayAppID = "2021000000000000"

    let alipay: SandboxAlipay
    let alipaySettings: Settings.Alipay

    init(settings: Settings.Server, logger: Logger) throws {
        let folder = URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let appKey = try Self.key(folder.appendingPathComponent("alipay-app-private-key.pem"))
        let alipayKey = try Self.key(folder.appendingPathComponent("alipay-simulator-private-key.pem"))
        // Alipay's retry schedule runs 60 times faster: its first retry comes after 4 seconds, not 4 minutes.
        alipay = SandboxAlipay(
            appID: Self.alipayAppID, alipayKey: alipayKey, appPublicKey: appKey.publicKey, timeScale: 1.0 / 60, logger: logger)
        let base = "http://\(settings.host == "0.0.0.0" ? "127.0.0.1" : settings.host):\(settings.port)"
        alipaySettings = Settings.Alipay(
            appID: Self.alipayAppID, appPrivateKey: appKey.pemRepresentation, publicKey: alipayKey.publicKey.pemRepresentation,
            certificates: nil, sellerID: alipay.sellerID, gatewayURL: base + "/sandbox/alipay/gateway.do",
            notifyURL: base + "/v1/notify/alipay")
    }

    func addRoutes(to router: Router<OrderSafeRequestContext>) {
        SandboxAlipayRoutes<OrderSafeRequestContext>(alipay: alipay).addRoutes(to: router.group("sandbox/alipay"))
    }

    /// The RSA key kept at `url` (mode 0600), generated when missing.
    private static func key(_ url: URL) throws -> _RSA.Signing.PrivateKey {
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return try _RSA.Signing.PrivateKey(pemRepresentation: text)
        }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        guard FileManager.default.createFile(
            atPath: url.path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        else { throw SettingsError(key: "server.data_dir", reason: "cannot write \(url.path)") }
        return key
    }
}
