import Configuration
import Foundation
import Ledger
import Logging
import Sandbox
import SystemPackage

/// Reads ``Settings`` from, highest priority first: command-line flags, `ORDERSAFE_<SECTION>_<KEY>` environment
/// variables, and the JSON config file (`--config` or `ORDERSAFE_CONFIG_FILE`). Secrets may instead be given as a
/// path in `<key>_file` (`ORDERSAFE_AUTH_JWT_SECRET_FILE`).
public enum SettingsLoader {
    /// - Parameters:
    ///   - flags: dotted keys to values, from the command line.
    ///   - environment: the process environment.
    ///   - configFile: an explicit config file path; otherwise `ORDERSAFE_CONFIG_FILE`, if set.
    public static func load(
        flags: [String: String] = [:], environment: [String: String], configFile: String? = nil
    ) async throws -> Settings {
        try await load(flags: flags, environment: environment, configFile: configFile, registry: .builtIn)
    }

    /// ``load(flags:environment:configFile:)`` of a server built with `registry`'s channels, each reading its
    /// section.
    static func load(
        flags: [String: String] = [:], environment: [String: String], configFile: String? = nil,
        registry: ChannelRegistry
    ) async throws -> Settings {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(
                    uniqueKeysWithValues: flags.map {
                        (AbsoluteConfigKey(ConfigKey($0.key)), ConfigValue(.string($0.value), isSecret: false))
                    })),
            EnvironmentVariablesProvider(
                environmentVariables: environment,
                secretsSpecifier: .dynamic { key, _ in
                    key.contains("SECRET") || key.contains("KEY") || key.contains("DATABASE_URL")
                }
            ).prefixKeys(with: "ordersafe"),
        ]
        if let path = configFile ?? environment["ORDERSAFE_CONFIG_FILE"] {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SettingsError(key: "config.file", reason: "cannot read config file '\(path)'")
            }
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
            } catch {
                throw SettingsError(key: "config.file", reason: "'\(path)' is not a valid JSON config file: \(error)")
            }
        }
        return try SettingsReader(ConfigReader(providers: providers)).settings(registry: registry)
    }
}

/// Turns raw configuration values into ``Settings``, naming the key of every bad value.
struct SettingsReader {
    let config: ConfigReader

    init(_ config: ConfigReader) {
        self.config = config
    }

    func settings(registry: ChannelRegistry) throws -> Settings {
        let environment = try choice("server.environment", default: Settings.Environment.sandbox)
        let dataDirectory = try string("server.data_dir") ?? "data"
        var server = Settings.Server(
            host: try string("server.host") ?? "127.0.0.1",
            port: try int("server.port", default: 8080, in: 0...65535),
            environment: environment,
            dataDirectory: dataDirectory,
            logFormat: try choice("server.log_format", default: Settings.LogFormat.text),
            logLevel: try choice("server.log_level", default: Logger.Level.info),
            maxBodyBytes: try int("server.max_body_bytes", default: 256 * 1024, in: 1024...(16 * 1024 * 1024)),
            allowsPublicSandbox: try bool("server.allow_public_sandbox", default: false))
        server.idleTimeoutSeconds = try int("server.idle_timeout_seconds", default: 30, in: 1...3600)
        server.requestTimeoutSeconds = try int("server.request_timeout_seconds", default: 30, in: 1...3600)
        server.shutdownSeconds = try int("server.shutdown_seconds", default: 20, in: 1...3600)
        server.trustForwardedFor = try bool("server.trust_forwarded_for", default: false)
        server.maxConnectionsPerAddress = try int("server.max_connections_per_address", default: 256, in: 0...1_000_000)
        server.maxConnections = try int("server.max_connections", default: 0, in: 0...1_000_000)
        server.sandboxRenewalRate = try choice(
            "server.sandbox_renewal_rate", default: SandboxRenewalRate.monthlyEveryFiveMinutes)
        if environment == .sandbox, !server.isLoopback, !server.allowsPublicSandbox {
            throw SettingsError(
                key: "server.host",
                reason:
                    "'\(server.host)' is not a loopback address, and sandbox mode must not be reachable from other machines: "
                    + "its built-in simulators hand out purchases this server trusts. Set server.environment=production with real "
                    + "provider accounts, or server.allow_public_sandbox=true for a private test network only")
        }

        let databaseText = try secret("database.url") ?? "sqlite:\(dataDirectory)/ordersafe.sqlite"
        let databaseURL: DatabaseURL
        do {
            databaseURL = try DatabaseURL(parsing: databaseText)
        } catch {
            throw SettingsError(key: "database.url", reason: error.reason)
        }
        let database = Settings.Database(
            url: databaseURL, poolSize: try int("database.pool_size", default: 4, in: 1...64))

        let algorithm = try choice("auth.jwt_algorithm", default: Settings.JWTAlgorithm.hs256)
        let auth = Settings.Auth(
            jwtAlgorithm: algorithm,
            jwtSecret: try secret("auth.jwt_secret"),
            jwtPublicKeyPEM: try secret("auth.jwt_public_key"),
            jwtIssuer: try string("auth.jwt_issuer"),
            jwtAudience: try string("auth.jwt_audience"),
            adminKey: try secret("auth.admin_key") ?? "",
            maxTokenLifetimeSeconds: try int(
                "auth.max_token_lifetime_seconds", default: 24 * 3600, in: 60...(366 * 24 * 3600)))
        try validate(auth, environment: environment)
        var settings = Settings(
            server: server, database: database, catalog: .init(file: try string("catalog.file")), auth: auth)
        settings.registry = registry
        for channel in registry.all { try channel.read(from: self, into: &settings) }
        settings.limits = Settings.Limits(
            perAddressPerMinute: try int("limits.per_address_per_minute", default: 3000, in: 0...1_000_000),
            perUserPerMinute: try int("limits.per_user_per_minute", default: 300, in: 0...1_000_000),
            unpaidOrdersPerUser: try int("limits.unpaid_orders_per_user", default: 30, in: 0...10_000))
        settings.reconcile = Settings.Reconcile(
            intervalSeconds: try int("reconcile.interval_seconds", default: 2, in: 0...3600),
            firstQuerySeconds: try int("reconcile.first_query_seconds", default: 60, in: 1...3600),
            statementHour: try int("reconcile.statement_hour", default: 10, in: 0...23))
        if let key = try secret("recovery.key") {
            guard key.utf8.count >= 32 else {
                throw SettingsError(key: "recovery.key", reason: "must be at least 32 characters")
            }
            settings.recoveryKey = key
        }
        settings.backup = Settings.Backup(
            everySeconds: try int("backup.every_seconds", default: 3600, in: 0...(7 * 86400)),
            keep: try int("backup.keep", default: 48, in: 1...10_000),
            directory: try string("backup.dir") ?? "\(dataDirectory)/backups")
        settings.console = Settings.Console(
            operatorKeys: try operatorKeys(),
            idleMinutes: try int("console.idle_minutes", default: 30, in: 1...1440),
            sessionHours: try int("console.session_hours", default: 12, in: 1...720),
            secureCookie: try bool("console.secure_cookie", default: environment == .production),
            signInAttemptsPerMinute: try int("console.sign_in_attempts_per_minute", default: 10, in: 1...1000),
            defaultTimeZone: try timeZone("console.time_zone", default: "Asia/Shanghai"))
        if let url = try url("webhooks.url") {
            guard let secret = try secret("webhooks.secret"), secret.utf8.count >= 32 else {
                throw SettingsError(
                    key: "webhooks.secret", reason: "is required with webhooks.url, at least 32 characters")
            }
            settings.webhooks = Settings.Webhooks(url: url, secret: secret)
        }
        if let url = try url("offer_hook.url") {
            guard let secret = try secret("offer_hook.secret"), secret.utf8.count >= 32 else {
                throw SettingsError(
                    key: "offer_hook.secret", reason: "is required with offer_hook.url, at least 32 characters")
            }
            settings.offerHook = Settings.OfferHook(
                url: url, secret: secret,
                timeoutMilliseconds: try int("offer_hook.timeout_ms", default: 2000, in: 100...10000))
        }
        return settings
    }

    /// The contents of the file named by `key`, if set.
    func file(_ key: String) throws -> String? {
        guard let path = try string(key) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw SettingsError(key: key, reason: "cannot read '\(path)'")
        }
        return text
    }

    private func validate(_ auth: Settings.Auth, environment: Settings.Environment) throws {
        switch auth.jwtAlgorithm {
        case .hs256:
            if let secret = auth.jwtSecret, secret.utf8.count < 32 {
                throw SettingsError(key: "auth.jwt_secret", reason: "must be at least 32 bytes for HS256")
            }
            if auth.jwtSecret == nil, environment == .production {
                throw SettingsError(key: "auth.jwt_secret", reason: "is required in production with HS256")
            }
        case .es256:
            guard auth.jwtPublicKeyPEM != nil else {
                throw SettingsError(key: "auth.jwt_public_key", reason: "is required with ES256 (a PEM public key)")
            }
        }
        if !auth.adminKey.isEmpty, auth.adminKey.utf8.count < 32 {
            throw SettingsError(key: "auth.admin_key", reason: "must be at least 32 characters")
        }
        if auth.adminKey.isEmpty, environment == .production {
            throw SettingsError(key: "auth.admin_key", reason: "is required in production")
        }
    }

    /// `auth.operator_keys`: `name=key` pairs separated by commas; names of 1–32 lowercase letters, digits, `.`, `_`
    /// or `-` (not `admin`, the admin key's), keys of at least 32 characters, each name and key once.
    private func operatorKeys() throws -> [String: String] {
        guard let text = try secret("auth.operator_keys"), !text.isEmpty else { return [:] }
        var keys: [String: String] = [:]
        let nameCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789._-".utf8)
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard parts.count == 2, (1...32).contains(name.utf8.count), name.utf8.allSatisfy(nameCharacters.contains)
            else {
                throw SettingsError(
                    key: "auth.operator_keys",
                    reason: "each entry must be name=key with a name of 1-32 characters a-z, 0-9, '.', '_' or '-'")
            }
            let key = parts[1].trimmingCharacters(in: .whitespaces)
            guard name != "admin" else {
                throw SettingsError(key: "auth.operator_keys", reason: "'admin' is the admin key's operator name")
            }
            guard key.utf8.count >= 32 else {
                throw SettingsError(
                    key: "auth.operator_keys", reason: "the key of '\(name)' must be at least 32 characters")
            }
            guard keys[name] == nil else {
                throw SettingsError(key: "auth.operator_keys", reason: "'\(name)' is named twice")
            }
            guard !keys.values.contains(key) else {
                throw SettingsError(key: "auth.operator_keys", reason: "two operators have the same key")
            }
            keys[name] = key
        }
        return keys
    }

    /// An IANA time zone name.
    private func timeZone(_ key: String, default fallback: String) throws -> String {
        let name = try string(key) ?? fallback
        guard ConsoleFormat.zone(named: name) != nil else {
            throw SettingsError(key: key, reason: "'\(name)' is not a time zone (e.g. Asia/Shanghai)")
        }
        return name
    }

    /// The value as text, whether the source gave a string, an integer or a boolean.
    func string(_ key: String) throws -> String? {
        let configKey = ConfigKey(key)
        let value =
            config.string(forKey: configKey) ?? config.int(forKey: configKey).map(String.init)
            ?? config.bool(forKey: configKey).map(String.init)
        guard let value else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw SettingsError(key: key, reason: "is empty") }
        return trimmed
    }

    /// A secret given inline (`key`) or as a file path (`key_file`), never both.
    func secret(_ key: String) throws -> String? {
        let configKey = ConfigKey(key)
        let inline = config.string(forKey: configKey, isSecret: true)
        let path = try string(key + "_file")
        switch (inline, path) {
        case (let value?, nil):
            guard !value.isEmpty else { throw SettingsError(key: key, reason: "is empty") }
            return value
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path),
                let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
                !text.isEmpty
            else {
                throw SettingsError(key: key + "_file", reason: "cannot read a non-empty UTF-8 secret from '\(path)'")
            }
            return text
        case (nil, nil):
            return nil
        case (.some, .some):
            throw SettingsError(key: key, reason: "is given both inline and as \(key)_file; give one")
        }
    }

    func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = try string(key) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw SettingsError(
                key: key, reason: "'\(text)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// An http(s) URL; in production only https, since provider calls, notifications and webhooks carry signatures
    /// and payment data.
    func url(_ key: String) throws -> String? {
        guard let text = try string(key) else { return nil }
        let production = try choice("server.environment", default: Settings.Environment.sandbox) == .production
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "https" || (scheme == "http" && !production), components.host?.isEmpty == false
        else {
            throw SettingsError(
                key: key,
                reason: "'\(text)' is not an \(production ? "https" : "http(s)") URL"
                    + (production ? " (production)" : ""))
        }
        return text
    }

    func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let text = try string(key) else { return defaultValue }
        guard let value = Bool(text.lowercased()) else {
            throw SettingsError(key: key, reason: "'\(text)' is not true or false")
        }
        return value
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, default defaultValue: T) throws -> T
    where T.RawValue == String {
        guard let text = try string(key) else { return defaultValue }
        if let value = T(rawValue: text) ?? T.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) {
            return value
        }
        throw SettingsError(
            key: key, reason: "'\(text)' is not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
    }
}
