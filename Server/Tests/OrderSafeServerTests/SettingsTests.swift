import Foundation
import Ledger
import OrderSafeServer
import Sandbox
import Testing

@Suite("Settings: flags over environment over config file, clear errors naming the key")
struct SettingsTests {
    @Test("defaults run the sandbox on an embedded database")
    func defaults() async throws {
        let settings = try await SettingsLoader.load(environment: [:])
        #expect(settings.server.environment == .sandbox)
        #expect(settings.server.host == "127.0.0.1")
        #expect(settings.server.port == 8080)
        #expect(settings.database.url == .sqliteFile(path: "data/ordersafe.sqlite"))
        #expect(settings.server.logFormat == .text)
        #expect(settings.auth.jwtAlgorithm == .hs256)
        #expect(settings.catalog.file == nil)
    }

    @Test(
        "loopback is localhost, ::1 or an IPv4 address in 127/8, never a name that starts with 127.",
        arguments: [
            ("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("[::1]", true), ("::1", true),
            ("127.attacker.example", false), ("127.0.0.1.nip.io", false), ("127.0.0", false), ("127.0.0.256", false),
            ("127.+1.0.1", false),
            ("0.0.0.0", false), ("128.0.0.1", false), ("example.com", false), ("", false),
        ])
    func loopback(host: String, loopback: Bool) async throws {
        var settings = try await SettingsLoader.load(environment: [:])
        settings.server.host = host
        #expect(settings.server.isLoopback == loopback, "\(host)")
    }

    @Test("a simulator's setting is read by its channel under its key, and a bad value names it")
    func simulatorSettings() async throws {
        let defaults = try await SettingsLoader.load(environment: [:])
        #expect(defaults.server.simulatorSettings[.wechatPay] as? SandboxWeChatPaySigning == .publicKey)
        let certificates = try await SettingsLoader.load(environment: [
            "ORDERSAFE_SERVER_SANDBOX_WECHATPAY_SIGNING": "platform_certificate"
        ])
        #expect(certificates.server.simulatorSettings[.wechatPay] as? SandboxWeChatPaySigning == .platformCertificate)
        let error = await #expect(throws: SettingsError.self) {
            try await SettingsLoader.load(environment: ["ORDERSAFE_SERVER_SANDBOX_WECHATPAY_SIGNING": "rsa"])
        }
        #expect(error?.key == "server.sandbox_wechatpay_signing")
    }

    @Test("ORDERSAFE_<SECTION>_<KEY> variables set values, and flags win over them")
    func environmentAndFlags() async throws {
        let environment = [
            "ORDERSAFE_SERVER_PORT": "9000", "ORDERSAFE_SERVER_LOG_FORMAT": "json",
            "ORDERSAFE_DATABASE_URL": "postgres://u:p@db.internal:5432/ordersafe",
            "ORDERSAFE_SERVER_DATA_DIR": "/var/lib/os",
        ]
        let fromEnvironment = try await SettingsLoader.load(environment: environment)
        #expect(fromEnvironment.server.port == 9000)
        #expect(fromEnvironment.server.logFormat == .json)
        #expect(fromEnvironment.database.url == .postgres(url: "postgres://u:p@db.internal:5432/ordersafe"))
        #expect("\(fromEnvironment.database.url)" == "postgres://u:***@db.internal:5432/ordersafe")
        let flagged = try await SettingsLoader.load(flags: ["server.port": "7000"], environment: environment)
        #expect(flagged.server.port == 7000)
    }

    @Test(
        "bad values are refused with the key and its environment variable",
        arguments: [
            (["ORDERSAFE_SERVER_PORT": "http"], "server.port", "ORDERSAFE_SERVER_PORT"),
            (["ORDERSAFE_SERVER_PORT": "70000"], "server.port", "from 0 to 65535"),
            (["ORDERSAFE_SERVER_ENVIRONMENT": "prod"], "server.environment", "sandbox, production"),
            (["ORDERSAFE_SERVER_LOG_FORMAT": "xml"], "server.log_format", "text, json"),
            (["ORDERSAFE_DATABASE_URL": "mysql://x"], "database.url", "expected sqlite:PATH"),
            (["ORDERSAFE_DATABASE_URL": "sqlite:"], "database.url", "empty"),
            (["ORDERSAFE_SERVER_ENVIRONMENT": "production"], "auth.jwt_secret", "required in production"),
            (["ORDERSAFE_AUTH_JWT_SECRET": "short"], "auth.jwt_secret", "at least 32 bytes"),
            (["ORDERSAFE_AUTH_JWT_ALGORITHM": "ES256"], "auth.jwt_public_key", "required with ES256"),
            (["ORDERSAFE_AUTH_JWT_ALGORITHM": "RS256"], "auth.jwt_algorithm", "HS256, ES256"),
            (["ORDERSAFE_AUTH_ADMIN_KEY": "tiny"], "auth.admin_key", "at least 32"),
            (["ORDERSAFE_RECOVERY_KEY": "short"], "recovery.key", "at least 32"),
            (
                [
                    "ORDERSAFE_SERVER_ENVIRONMENT": "production",
                    "ORDERSAFE_AUTH_JWT_SECRET": String(repeating: "s", count: 32),
                ],
                "auth.admin_key", "required in production"
            ),
            (["ORDERSAFE_AUTH_JWT_SECRET_FILE": "/nonexistent/secret"], "auth.jwt_secret_file", "cannot read"),
            (["ORDERSAFE_CONFIG_FILE": "/nonexistent/config.json"], "config.file", "cannot read"),
            (["ORDERSAFE_SERVER_HOST": "  "], "server.host", "empty"),
            (["ORDERSAFE_SERVER_HOST": "0.0.0.0"], "server.host", "not a loopback address"),
            (
                [
                    "ORDERSAFE_SERVER_ENVIRONMENT": "production",
                    "ORDERSAFE_AUTH_JWT_SECRET": String(repeating: "s", count: 32),
                    "ORDERSAFE_AUTH_ADMIN_KEY": String(repeating: "a", count: 32),
                    "ORDERSAFE_APPSTORE_BUNDLE_ID": "com.example.app",
                    "ORDERSAFE_APPSTORE_ENVIRONMENT": "Sandbox",
                ], "appstore.environment", "Sandbox on a production server"
            ),
            (["ORDERSAFE_SERVER_ALLOW_PUBLIC_SANDBOX": "yes"], "server.allow_public_sandbox", "true or false"),
            (["ORDERSAFE_AUTH_MAX_TOKEN_LIFETIME_SECONDS": "0"], "auth.max_token_lifetime_seconds", "from 60"),
            (["ORDERSAFE_WEBHOOKS_URL": "ftp://merchant.example/hook"], "webhooks.url", "http(s) URL"),
            (
                [
                    "ORDERSAFE_SERVER_ENVIRONMENT": "production",
                    "ORDERSAFE_AUTH_JWT_SECRET": String(repeating: "s", count: 32),
                    "ORDERSAFE_AUTH_ADMIN_KEY": String(repeating: "a", count: 32),
                    "ORDERSAFE_WEBHOOKS_URL": "http://merchant.example/hook",
                    "ORDERSAFE_WEBHOOKS_SECRET": String(repeating: "w", count: 32),
                ], "webhooks.url", "https URL"
            ),
            (
                [
                    "ORDERSAFE_SERVER_ENVIRONMENT": "production",
                    "ORDERSAFE_AUTH_JWT_SECRET": String(repeating: "s", count: 32),
                    "ORDERSAFE_AUTH_ADMIN_KEY": String(repeating: "a", count: 32),
                    "ORDERSAFE_WECHATPAY_MCH_ID": "1900000001",
                    "ORDERSAFE_WECHATPAY_NOTIFY_URL": "http://merchant.example/v1/notify/wechatpay",
                ], "wechatpay.notify_url", "https URL"
            ),
        ])
    func invalid(environment: [String: String], key: String, fragment: String) async {
        do {
            _ = try await SettingsLoader.load(environment: environment)
            Issue.record("accepted \(environment)")
        } catch let error as SettingsError {
            #expect(error.key == key)
            #expect(error.description.contains(fragment), "\(error.description)")
            #expect(error.description.contains(error.environmentVariable))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("secrets can come from files, but not from a file and inline at once")
    func secretFiles() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)").path
        let secret = String(repeating: "f", count: 40)
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try await SettingsLoader.load(environment: ["ORDERSAFE_AUTH_JWT_SECRET_FILE": path])
        #expect(settings.auth.jwtSecret == secret)
        await #expect(throws: SettingsError.self) {
            try await SettingsLoader.load(environment: [
                "ORDERSAFE_AUTH_JWT_SECRET_FILE": path, "ORDERSAFE_AUTH_JWT_SECRET": secret,
            ])
        }
    }

    @Test("a JSON config file sets nested sections; the environment overrides it")
    func configFile() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).json")
            .path
        try Data(
            #"""
            {"server": {"port": 8181, "environment": "sandbox", "log_level": "debug"},
             "database": {"url": "sqlite:/tmp/x.sqlite", "pool_size": 8},
             "catalog": {"file": "/etc/ordersafe/catalog.json"}}
            """#.utf8
        ).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try await SettingsLoader.load(environment: ["ORDERSAFE_CONFIG_FILE": path])
        #expect(settings.server.port == 8181)
        #expect(settings.server.logLevel == .debug)
        #expect(settings.database.url == .sqliteFile(path: "/tmp/x.sqlite"))
        #expect(settings.database.poolSize == 8)
        #expect(settings.catalog.file == "/etc/ordersafe/catalog.json")
        let overridden = try await SettingsLoader.load(environment: ["ORDERSAFE_SERVER_PORT": "8282"], configFile: path)
        #expect(overridden.server.port == 8282)

        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: SettingsError.self) { try await SettingsLoader.load(environment: [:], configFile: path) }
    }
}
