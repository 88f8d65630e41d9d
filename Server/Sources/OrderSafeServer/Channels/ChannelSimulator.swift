import ChannelSupport
import Crypto
import Engine
import Foundation
import Hummingbird
import Logging
import OrderSafeModel
import Sandbox
import ServiceLifecycle
import _CryptoExtras

/// A channel's built-in provider simulator, which stands in for the provider while a sandbox server has no account.
protocol ChannelSimulator: Sendable {
    associatedtype Account: ChannelSettings
    /// Starts the simulator, with its keys and journals kept in `setup`'s folder.
    init(_ setup: SimulatorSetup) throws
    /// The account that points the channel at this simulator.
    var account: Account { get }
    /// Calls the simulator in process, as the channel would call its provider over the network.
    var transport: any ProviderTransport { get }
    /// Picks up where the simulator was when a server last stopped on its data folder, as the real provider would
    /// have (notifications nobody acknowledged are sent again). Idempotent; throws when what it kept cannot be read
    /// back.
    func resume() async throws
    /// Its routes under `/sandbox`, selling `catalog`.
    func addRoutes(to router: Router<OrderSafeRequestContext>, catalog: Catalog) async
    /// What it runs beside a listening server (the App Store's billing clock), in the application's service group;
    /// none when the server is driven in process.
    func services(logger: Logger) async -> [any Service]
}

extension ChannelSimulator {
    func services(logger: Logger) async -> [any Service] { [] }
}

/// Where and how simulators start: the folder their keys and journals are kept in, the server's own address (the
/// URLs the simulated accounts point at), the clock, how much faster their retry schedules run, and the logger.
struct SimulatorSetup: Sendable {
    /// Where its keys are kept.
    let folder: URL
    /// Where it keeps its journals and id counters: `folder`, or nil for a simulator started without what it kept
    /// (its journal could not be read; see ``SandboxProviders``), which must then refuse every request.
    private(set) var journalFolder: URL?
    /// `http://host:port` of this server.
    let base: String
    let clock: any WallClock
    /// Multiplies the providers' notification retry schedules (1/60: Alipay's first retry after 4 seconds).
    let timeScale: Double
    /// How fast the App Store's subscriptions renew.
    let renewalRate: SandboxRenewalRate
    /// What each simulator is told by the settings (``PaymentChannel/simulatorSettings(from:)``), by channel.
    let simulatorSettings: [Channel: any Sendable]
    let logger: Logger

    init(settings: Settings.Server, clock: any WallClock, timeScale: Double, logger: Logger) throws {
        folder = URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        journalFolder = folder
        base = "http://\(settings.host == "0.0.0.0" ? "127.0.0.1" : settings.host):\(settings.port)"
        self.clock = clock
        self.timeScale = timeScale
        renewalRate = settings.sandboxRenewalRate
        simulatorSettings = settings.simulatorSettings
        self.logger = logger
    }

    /// The same setup without journals: the simulator starts empty and keeps nothing.
    var withoutJournals: SimulatorSetup {
        var setup = self
        setup.journalFolder = nil
        return setup
    }

    /// The RSA key kept in `file` (mode 0600), generated when missing, written as the provider's own tools write
    /// it: PKCS#8 (`BEGIN PRIVATE KEY`, as WeChat Pay's `apiclient_key.pem`) or PKCS#1 (`BEGIN RSA PRIVATE KEY`, as
    /// Alipay's key tool writes for languages other than Java). A key kept in the other form is rewritten.
    func rsaKey(_ file: String, pkcs8: Bool = false) throws -> _RSA.Signing.PrivateKey {
        let url = folder.appendingPathComponent(file)
        let key: _RSA.Signing.PrivateKey
        let kept = try? String(contentsOf: url, encoding: .utf8)
        if let kept {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: kept)
        } else {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        }
        let text = pkcs8 ? key.pkcs8PEMRepresentation : key.pemRepresentation
        if kept != text { try Self.write(text, to: url) }
        return key
    }

    /// Writes what a merchant copies into its own SDK's configuration (public keys, ids) to `file`, mode 0644,
    /// replacing what was there.
    func publish(_ text: String, as file: String) throws {
        let url = folder.appendingPathComponent(file)
        try? FileManager.default.removeItem(at: url)
        guard
            FileManager.default.createFile(
                atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644])
        else {
            throw SettingsError(key: "server.data_dir", reason: "cannot write \(url.path)")
        }
    }

    /// The P-256 key kept in `file` (mode 0600), generated when missing (the App Store Server API key the merchant
    /// would download from App Store Connect).
    func p256Key(_ file: String) throws -> P256.Signing.PrivateKey {
        let url = folder.appendingPathComponent(file)
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return try P256.Signing.PrivateKey(pemRepresentation: text)
        }
        let key = P256.Signing.PrivateKey()
        try Self.write(key.pemRepresentation, to: url)
        return key
    }

    /// A 32-character secret kept in `file` (mode 0600), generated when missing.
    func secret(_ file: String) throws -> String {
        let url = folder.appendingPathComponent(file)
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let secret = String((0..<32).map { _ in alphabet.randomElement()! })
        try Self.write(secret, to: url)
        return secret
    }

    private static func write(_ text: String, to url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        guard
            FileManager.default.createFile(
                atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw SettingsError(key: "server.data_dir", reason: "cannot write \(url.path)")
        }
    }
}
