import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import Logging
import OrderSafeModel
import Testing
import _CryptoExtras

@testable import OrderSafeServer

#if canImport(Glibc)
import Glibc
#endif

struct FixedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}

/// Builds the real application on a private SQLite database with pinned clock and credentials.
enum TestServer {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let jwtSecret = "test-secret-test-secret-test-secret-0123"
    static let adminKey = "admin-key-admin-key-admin-key-0123456789"

    /// A data folder for this test process, shared by the tests that need no folder of their own.
    static let sharedDataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "ordersafe-test-\(UUID().uuidString)"
    ).path

    /// A merchant webhook endpoint (nothing listens on port 9): with it, writes keep their webhook events in the outbox,
    /// which a test reads in the console's dossier; without it they keep none.
    static let webhookEndpoint = [
        "ORDERSAFE_WEBHOOKS_URL": "http://127.0.0.1:9/webhooks",
        "ORDERSAFE_WEBHOOKS_SECRET": "whsec-test-0123456789abcdef0123456789",
    ]

    static func settings(database: String = "sqlite::memory:", extra: [String: String] = [:]) async throws -> Settings {
        try await SettingsLoader.load(
            environment: [
                "ORDERSAFE_DATABASE_URL": database,
                "ORDERSAFE_AUTH_JWT_SECRET": jwtSecret,
                "ORDERSAFE_AUTH_ADMIN_KEY": adminKey,
                "ORDERSAFE_SERVER_DATA_DIR": sharedDataDirectory,
                // Flows move their clocks by weeks with one token per user; AuthTests checks the 24-hour default.
                "ORDERSAFE_AUTH_MAX_TOKEN_LIFETIME_SECONDS": "\(366 * 86400)",
                // Pinned clocks never refill a bucket; RateLimitTests turns the limits on with a clock it moves.
                "ORDERSAFE_LIMITS_PER_ADDRESS_PER_MINUTE": "0", "ORDERSAFE_LIMITS_PER_USER_PER_MINUTE": "0",
                // Chaos runs leave many orders of a user unpaid; FloodTests turns the cap on.
                "ORDERSAFE_LIMITS_UNPAID_ORDERS_PER_USER": "0",
                // Subscription flows reckon in calendar months; SubscriptionQuarterTests runs Apple's sandbox rate.
                "ORDERSAFE_SERVER_SANDBOX_RENEWAL_RATE": "real_time",
            ].merging(extra) { $1 })
    }

    /// Production settings with an Alipay account only and a catalog of one product, `parcel`, sold through
    /// `channels`, on a data folder of their own: the shared one holds what sandbox-mode tests running beside them
    /// wrote (its `sandbox/appstore-ca.json` failed the check that production mints nothing, when tests ran eight at
    /// a time).
    static func productionSettings(selling channels: [Channel]) async throws -> Settings {
        let catalog = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).json")
            .path
        let prices = channels.map { #""\#($0.rawValue)": {"amount_minor": 9900, "currency": "CNY"}"# }.joined(
            separator: ",")
        try Data(
            #"""
            {"version": "parcel-1", "products": [{"id": "parcel", "kind": "consumable", "title": "Parcel", "goods": "physical",
             "channels": [\#(channels.map { "\"\($0.rawValue)\"" }.joined(separator: ","))], "prices": {\#(prices)},
             "grants": [{"type": "add_balance", "balance": "parcels", "amount": 1}]}]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: catalog))
        let appKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let alipayKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return try await settings(extra: [
            "ORDERSAFE_SERVER_ENVIRONMENT": "production", "ORDERSAFE_CATALOG_FILE": catalog,
            "ORDERSAFE_SERVER_DATA_DIR": FileManager.default.temporaryDirectory.appendingPathComponent(
                "ordersafe-production-\(UUID().uuidString)"
            ).path,
            "ORDERSAFE_ALIPAY_APP_ID": "2021000000000009",
            "ORDERSAFE_ALIPAY_NOTIFY_URL": "https://merchant.example/v1/notify/alipay",
            "ORDERSAFE_ALIPAY_APP_PRIVATE_KEY": appKey.pemRepresentation,
            "ORDERSAFE_ALIPAY_PUBLIC_KEY": alipayKey.publicKey.pemRepresentation,
        ])
    }

    /// Runs `body` against a freshly built application.
    static func run(
        database: String = "sqlite::memory:", clock: Date = now, extra: [String: String] = [:],
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await OrderSafeApplication.build(
            settings: try await settings(database: database, extra: extra), clock: FixedClock(date: clock),
            logger: TestLog.logger)
        try await app.test(.router) { client in try await body(client) }
    }

    /// Runs `body` on a fresh server with its own data folder and a clock the test moves, handing it the server's
    /// components (job runner, ledger, sandboxes). Port 9: nothing listens there, so every provider notification
    /// sent over HTTP is lost and only what the test delivers, or a query, settles an order.
    ///
    /// `beforeStart` is handed the sandboxes before the server starts them (and they send again what the merchant
    /// never acknowledged): a test sets where their notifications go.
    static func withComponents(
        extra: [String: String] = [:], beforeStart: (@Sendable (SandboxProviders) async -> Void)? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol, OrderSafeComponents, ManualClock) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-server-\(UUID().uuidString)"
        ).path
        let settings = try await settings(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": directory, "ORDERSAFE_SERVER_PORT": "9"].merging(extra) { $1 })
        let clock = ManualClock(now)
        var sandbox: SandboxProviders?
        if let beforeStart {
            sandbox = try SandboxProviders(settings: settings.server, clock: clock, logger: TestLog.logger)
            await beforeStart(sandbox!)
        }
        let (router, components) = try await OrderSafeApplication.makeRouter(
            settings: settings, clock: clock, random: { UInt64.random(in: .min ... .max) }, logger: TestLog.logger,
            sandbox: sandbox)
        // The data folder goes with the server (thousands were left behind, run after run).
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            try await Application(router: router, logger: TestLog.logger).test(.router) { client in
                try await body(client, components, clock)
            }
            try await components.database.shutdown()
        } catch {
            try? await components.database.shutdown()
            throw error
        }
    }

    /// ``withComponents(extra:_:)`` on a fresh database of `engine` (SQLite file or PostgreSQL).
    static func withComponents(
        engine: TestEngine, extra: [String: String] = [:],
        _ body: @escaping @Sendable (any TestClientProtocol, OrderSafeComponents, ManualClock) async throws -> Void
    ) async throws {
        try await engine.withDatabaseURL { url in
            try await withComponents(
                extra: extra.merging(["ORDERSAFE_DATABASE_URL": databaseSetting(url)]) { $1 }, body)
        }
    }

    /// `database.url` as a setting names `url`.
    static func databaseSetting(_ url: DatabaseURL) -> String {
        switch url {
        case .sqliteFile(let path): "sqlite:\(path)"
        case .postgres(let text): text
        case .sqliteMemory: "sqlite::memory:"
        }
    }

    static func token(_ user: String, issuedAt: Date = now, lifetime: TimeInterval = 3600, secret: String = jwtSecret)
        async throws -> String
    {
        try await DevelopmentTokenIssuer(secret: secret).token(userID: user, now: issuedAt, lifetime: lifetime)
    }

    static func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    /// A loopback port nothing listens on now (the kernel's choice), for a live server whose settings must name its
    /// port before it starts; a random pick once collided with another test's server.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// `POST /v1/orders` for `product` as the token's user.
    static func createOrder(
        _ client: any TestClientProtocol, token: String, product: String = "coins_60", channel: String = "appstore"
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/orders", method: .post, headers: bearer(token),
            body: json(#"{"product_id":"\#(product)","channel":"\#(channel)"}"#))
    }

    /// Base64url without padding, as JWTs spell it.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

extension TestResponse {
    func decoded<T: Decodable>(_ type: T.Type) throws -> T {
        try OrderSafeJSON.decoder().decode(T.self, from: Data(buffer: body))
    }

    /// The `error.code` of an API error body, failing the test if the body is not one.
    func errorCode() throws -> String {
        try decoded(APIErrorResponse.self).error.code
    }
}
