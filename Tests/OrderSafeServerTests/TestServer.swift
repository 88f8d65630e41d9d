import Foundation
import LedgerTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import OrderSafeModel
import OrderSafeServer
import Synchronization
import Testing

struct FixedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}

/// A clock the test moves forward.
final class ManualClock: WallClock {
    private let date: Mutex<Date>

    init(_ date: Date) {
        self.date = Mutex(date)
    }

    func now() -> Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0 += seconds }
    }
}

/// Builds the real application on a private SQLite database with pinned clock and credentials.
enum TestServer {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let jwtSecret = "test-secret-test-secret-test-secret-0123"
    static let adminKey = "admin-key-admin-key-admin-key-0123456789"

    /// A data folder for this test process, shared by the tests that need no folder of their own.
    static let sharedDataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("ordersafe-test-\(UUID().uuidString)").path

    static func settings(database: String = "sqlite::memory:", extra: [String: String] = [:]) async throws -> Settings {
        try await SettingsLoader.load(environment: [
            "ORDERSAFE_DATABASE_URL": database,
            "ORDERSAFE_AUTH_JWT_SECRET": jwtSecret,
            "ORDERSAFE_AUTH_ADMIN_KEY": adminKey,
            "ORDERSAFE_SERVER_DATA_DIR": sharedDataDirectory,
        ].merging(extra) { $1 })
    }

    /// Runs `body` against a freshly built application.
    static func run(
        database: String = "sqlite::memory:", clock: Date = now,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await OrderSafeApplication.build(
            settings: try await settings(database: database), clock: FixedClock(date: clock), logger: TestLog.logger)
        try await app.test(.router) { client in try await body(client) }
    }

    static func token(_ user: String, issuedAt: Date = now, lifetime: TimeInterval = 3600, secret: String = jwtSecret)
        async throws -> String
    {
        try await DevelopmentTokenIssuer(secret: secret).token(userID: user, now: issuedAt, lifetime: lifetime)
    }

    static func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

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
