import ChannelSupport
import Foundation
import JWTKit
import Logging
import OrderSafeModel
import Synchronization

/// The App Store Server API: transaction info and history, subscription statuses, refund history, notification
/// history, order lookup, consumption information and test notifications. Requests carry an ES256 JWT (`iss`,
/// `iat`, `exp`, `aud: appstoreconnect-v1`, `bid`, `kid`) cached until a minute before it expires. Network
/// failures, 5xx, Apple's retryable codes and 429 (after `Retry-After`) are retried; the signed data in answers
/// is returned as received, for ``SignedDataVerifier``.
public struct AppStoreServerAPIClient: Sendable {
    public static let productionURL = "https://api.storekit.itunes.apple.com"
    public static let sandboxURL = "https://api.storekit-sandbox.itunes.apple.com"

    struct Claims: JWTPayload {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud: String
        var bid: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    let keys: JWTKeyCollection
    let keyID: String
    let issuerID: String
    let bundleID: String
    let baseURL: String
    let transport: any ProviderTransport
    let retry: RetryPolicy
    let clock: any WallClock
    let sleep: @Sendable (Duration) async throws -> Void
    let logger: Logger
    private let token = TokenCache()
    /// Tokens live this long (Apple allows up to an hour).
    static let tokenLifetime: TimeInterval = 20 * 60

    /// - Parameters:
    ///   - signingKey: the in-app purchase key from App Store Connect (`.p8`, PEM PKCS#8).
    public init(
        signingKey: String, keyID: String, issuerID: String, bundleID: String, baseURL: String = productionURL,
        transport: any ProviderTransport = HTTPClientProviderTransport(), retry: RetryPolicy = RetryPolicy(),
        clock: any WallClock = SystemClock(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = Logger(label: "ordersafe.appstore.api")
    ) async throws(AppStoreServerAPIError) {
        do {
            keys = await JWTKeyCollection().add(
                ecdsa: try ES256PrivateKey(pem: signingKey), kid: JWKIdentifier(string: keyID))
        } catch {
            throw .configuration("the signing key is not a PEM P-256 private key (\(error))")
        }
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.transport = transport
        self.retry = retry
        self.clock = clock
        self.sleep = sleep
        self.logger = logger
    }

    // MARK: Endpoints

    /// `GET /inApps/v1/transactions/{transactionId}`: the signed transaction.
    public func transactionInfo(transactionID: String) async throws(AppStoreServerAPIError) -> String {
        try await call("GET", "/inApps/v1/transactions/\(Self.segment(transactionID))").string("signedTransactionInfo")
    }

    /// One page of `GET /inApps/v2/history/{transactionId}`.
    public func transactionHistory(transactionID: String, revision: String? = nil, query: [(String, String)] = [])
        async throws(AppStoreServerAPIError) -> HistoryPage
    {
        var parameters = query
        if let revision { parameters.append(("revision", revision)) }
        let object = try await call("GET", "/inApps/v2/history/\(Self.segment(transactionID))" + Self.query(parameters))
        return HistoryPage(
            signedTransactions: try object.strings("signedTransactions"),
            revision: try object.optionalString("revision"),
            hasMore: try object.optionalBool("hasMore") ?? false)
    }

    /// Every page of the transaction history, following `revision` while `hasMore`.
    public func fullTransactionHistory(transactionID: String, query: [(String, String)] = [])
        async throws(AppStoreServerAPIError) -> [String]
    {
        var signed: [String] = []
        var revision: String?
        for _ in 0..<10_000 {
            let page = try await transactionHistory(transactionID: transactionID, revision: revision, query: query)
            signed += page.signedTransactions
            guard page.hasMore, let next = page.revision else { return signed }
            revision = next
        }
        throw .malformedResponse("transaction history did not end after 10,000 pages")
    }

    /// `GET /inApps/v1/subscriptions/{transactionId}`: the raw answer (subscription groups with signed data).
    public func allSubscriptionStatuses(transactionID: String, statuses: [Int] = [])
        async throws(AppStoreServerAPIError) -> [UInt8]
    {
        try await raw(
            "GET",
            "/inApps/v1/subscriptions/\(Self.segment(transactionID))"
                + Self.query(statuses.map { ("status", String($0)) }))
    }

    /// One page of `GET /inApps/v2/refund/lookup/{transactionId}`.
    public func refundHistory(transactionID: String, revision: String? = nil) async throws(AppStoreServerAPIError)
        -> HistoryPage
    {
        let object = try await call(
            "GET",
            "/inApps/v2/refund/lookup/\(Self.segment(transactionID))"
                + Self.query(revision.map { [("revision", $0)] } ?? []))
        return HistoryPage(
            signedTransactions: try object.strings("signedTransactions"),
            revision: try object.optionalString("revision"),
            hasMore: try object.optionalBool("hasMore") ?? false)
    }

    /// One page of `POST /inApps/v1/notifications/history` between two dates (milliseconds).
    public func notificationHistory(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, paginationToken: String? = nil
    )
        async throws(AppStoreServerAPIError) -> NotificationHistoryPage
    {
        var body = #"{"startDate":\#(startDate),"endDate":\#(endDate)"#
        if let notificationType { body += #","notificationType":\#(JSONString.encode(notificationType))"# }
        body += "}"
        let object = try await call(
            "POST",
            "/inApps/v1/notifications/history" + Self.query(paginationToken.map { [("paginationToken", $0)] } ?? []),
            body: body)
        var payloads: [String] = []
        for item in (try? object.array("notificationHistory")) ?? [] {
            if let entry = try? JSONObject(item), let payload = try? entry.string("signedPayload") {
                payloads.append(payload)
            }
        }
        return NotificationHistoryPage(
            signedPayloads: payloads, paginationToken: try object.optionalString("paginationToken"),
            hasMore: try object.optionalBool("hasMore") ?? false)
    }

    /// `GET /inApps/v1/lookup/{orderId}`: `status` 0 with signed transactions, or 1 (invalid order id).
    public func lookUpOrderID(_ orderID: String) async throws(AppStoreServerAPIError) -> (
        status: Int64, signedTransactions: [String]
    ) {
        let object = try await call("GET", "/inApps/v1/lookup/\(Self.segment(orderID))")
        return (try object.int("status"), try object.strings("signedTransactions"))
    }

    /// `PUT /inApps/v1/transactions/consumption/{transactionId}` with the consumption information JSON (answered 202).
    public func sendConsumptionInformation(transactionID: String, json: String) async throws(AppStoreServerAPIError) {
        _ = try await raw("PUT", "/inApps/v1/transactions/consumption/\(Self.segment(transactionID))", body: json)
    }

    /// `POST /inApps/v1/notifications/test`: the test notification token.
    public func requestTestNotification() async throws(AppStoreServerAPIError) -> String {
        try await call("POST", "/inApps/v1/notifications/test").string("testNotificationToken")
    }

    /// `GET /inApps/v1/notifications/test/{token}`: the raw answer (the signed payload and send attempts).
    public func testNotificationStatus(token: String) async throws(AppStoreServerAPIError) -> [UInt8] {
        try await raw("GET", "/inApps/v1/notifications/test/\(Self.segment(token))")
    }

    public struct HistoryPage: Sendable, Hashable {
        public var signedTransactions: [String]
        public var revision: String?
        public var hasMore: Bool
    }

    public struct NotificationHistoryPage: Sendable, Hashable {
        public var signedPayloads: [String]
        public var paginationToken: String?
        public var hasMore: Bool
    }

    // MARK: Transport

    /// The current bearer token, minted anew a minute before the cached one expires.
    func bearerToken() async throws(AppStoreServerAPIError) -> String {
        let now = clock.now()
        if let cached = token.current.withLock({ $0 }), cached.expiresAt.timeIntervalSince(now) > 60 {
            return cached.value
        }
        let issuedAt = Int64(now.timeIntervalSince1970)
        let claims = Claims(
            iss: issuerID, iat: issuedAt, exp: issuedAt + Int64(Self.tokenLifetime), aud: "appstoreconnect-v1",
            bid: bundleID)
        var header = JWTHeader()
        header.typ = "JWT"
        do {
            let value = try await keys.sign(claims, kid: JWKIdentifier(string: keyID), header: header)
            token.current.withLock { $0 = (value, now.addingTimeInterval(Self.tokenLifetime)) }
            return value
        } catch {
            throw .configuration("cannot sign the request token (\(error))")
        }
    }

    private func call(_ method: String, _ path: String, body: String = "") async throws(AppStoreServerAPIError)
        -> Answer
    {
        let bytes = try await raw(method, path, body: body)
        do {
            return Answer(object: try JSONObject(bytes))
        } catch {
            throw .malformedResponse("\(error)")
        }
    }

    private func raw(_ method: String, _ path: String, body: String = "") async throws(AppStoreServerAPIError)
        -> [UInt8]
    {
        try await retry.run(
            sleep: sleep,
            onRetry: { attempt, error in
                logger.warning(
                    "app store server api call failed",
                    metadata: ["path": "\(path)", "attempt": "\(attempt)", "error": "\(error)"])
            }
        ) { () async -> Attempt<[UInt8], AppStoreServerAPIError> in
            var headers = ["Accept": "application/json"]
            do throws(AppStoreServerAPIError) {
                headers["Authorization"] = "Bearer \(try await bearerToken())"
            } catch {
                return .stop(error)
            }
            if !body.isEmpty { headers["Content-Type"] = "application/json" }
            let response: ProviderHTTPResponse
            do {
                response = try await transport.send(
                    method: method, url: baseURL + path, headers: headers, body: Array(body.utf8),
                    timeout: retry.timeout)
            } catch {
                return .transportFailure(error) { .unavailable($0) }
            }
            if (200..<300).contains(response.status) { return .success(response.body) }
            let error = Self.error(for: response)
            guard case .rateLimited(let retryAfter?) = error else {
                return .failure(error, retryable: error.isRetryable)
            }
            return .retry(error, after: .seconds(min(max(retryAfter, 0), 3600)))
        }
    }

    static func error(for response: ProviderHTTPResponse) -> AppStoreServerAPIError {
        if response.status == 429 {
            let value = response.headers.first { $0.key.caseInsensitiveCompare("Retry-After") == .orderedSame }?.value
            return .rateLimited(retryAfter: value.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) })
        }
        let object = try? JSONObject(response.body)
        let code = (try? object?.optionalInt("errorCode")).flatMap { $0 }.map(Int.init)
        let message = ((try? object?.optionalString("errorMessage")) ?? nil) ?? "HTTP \(response.status)"
        if response.status >= 500, code == nil { return .unavailable("HTTP \(response.status)") }
        return .api(status: response.status, code: code, message: message)
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    static func query(_ parameters: [(String, String)]) -> String {
        parameters.isEmpty ? "" : "?" + parameters.map { "\(segment($0.0))=\(segment($0.1))" }.joined(separator: "&")
    }

    /// A JSON answer with typed accessors that throw the client's error.
    struct Answer {
        let object: JSONObject

        func string(_ name: String) throws(AppStoreServerAPIError) -> String {
            do { return try object.string(name) } catch { throw .malformedResponse("\(error)") }
        }

        func optionalString(_ name: String) throws(AppStoreServerAPIError) -> String? {
            do { return try object.optionalString(name) } catch { throw .malformedResponse("\(error)") }
        }

        func optionalBool(_ name: String) throws(AppStoreServerAPIError) -> Bool? {
            do { return try object.optionalBool(name) } catch { throw .malformedResponse("\(error)") }
        }

        func int(_ name: String) throws(AppStoreServerAPIError) -> Int64 {
            do { return try object.int(name) } catch { throw .malformedResponse("\(error)") }
        }

        func strings(_ name: String) throws(AppStoreServerAPIError) -> [String] {
            do { return try object.optionalStrings(name) ?? [] } catch { throw .malformedResponse("\(error)") }
        }

        func array(_ name: String) throws(AppStoreServerAPIError) -> [ArraySlice<UInt8>] {
            do { return try object.optionalArray(name) ?? [] } catch { throw .malformedResponse("\(error)") }
        }
    }
}

/// The bearer token shared by copies of a client.
final class TokenCache: Sendable {
    let current = Mutex<(value: String, expiresAt: Date)?>(nil)
}
