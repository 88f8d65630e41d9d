import ChannelSupport
import Crypto
import Foundation
import Synchronization
import Testing

@testable import AppStore

/// A fake App Store Server API: answers from a script, records requests.
final class FakeServerAPI: ProviderTransport {
    struct Request: Sendable {
        var method: String
        var url: String
        var headers: [String: String]
        var body: String
    }

    let script: Mutex<[(Int, [String: String], String)]>
    let requests = Mutex<[Request]>([])

    init(_ script: [(Int, [String: String], String)]) {
        self.script = Mutex(script)
    }

    func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> ProviderHTTPResponse
    {
        requests.withLock {
            $0.append(Request(method: method, url: url, headers: headers, body: String(decoding: body, as: UTF8.self)))
        }
        let (status, answerHeaders, text) = script.withLock { $0.isEmpty ? (500, [:], "") : $0.removeFirst() }
        return ProviderHTTPResponse(status: status, headers: answerHeaders, body: Array(text.utf8))
    }
}

final class Sleeps: Sendable {
    let recorded = Mutex<[Duration]>([])
}

@Suite("App Store Server API client")
struct AppStoreServerAPITests {
    static let key = P256.Signing.PrivateKey()

    static func client(
        _ fake: FakeServerAPI, sleeps: Sleeps = Sleeps(),
        clock: FixedClock = FixedClock(date: Date(timeIntervalSince1970: 1_795_000_000))
    )
        async throws -> AppStoreServerAPIClient
    {
        try await AppStoreServerAPIClient(
            signingKey: key.pemRepresentation, keyID: "KEY123", issuerID: "issuer-uuid", bundleID: "com.example.app",
            baseURL: "https://local-testing-base-url", transport: fake,
            retry: RetryPolicy(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(1)), clock: clock,
            sleep: { duration in sleeps.recorded.withLock { $0.append(duration) } })
    }

    @Test("requests carry an ES256 JWT with Apple's claims, verifiable with the key, reused while fresh")
    func authentication() async throws {
        let fake = FakeServerAPI([
            (200, [:], #"{"signedTransactionInfo":"a.b.c"}"#), (200, [:], #"{"signedTransactionInfo":"d.e.f"}"#),
        ])
        let client = try await Self.client(fake)
        #expect(try await client.transactionInfo(transactionID: "1234") == "a.b.c")
        #expect(try await client.transactionInfo(transactionID: "1234") == "d.e.f")
        let requests = fake.requests.withLock { $0 }
        #expect(
            requests[0].url == "https://local-testing-base-url/inApps/v1/transactions/1234"
                && requests[0].method == "GET")
        let token = String(requests[0].headers["Authorization"]!.dropFirst("Bearer ".count))
        #expect(requests[1].headers["Authorization"] == requests[0].headers["Authorization"])
        let parts = token.split(separator: ".").map(String.init)
        let header =
            try JSONSerialization.jsonObject(with: Data(Base64URL.decode(ArraySlice(parts[0].utf8))!)) as! [String: Any]
        let claims =
            try JSONSerialization.jsonObject(with: Data(Base64URL.decode(ArraySlice(parts[1].utf8))!)) as! [String: Any]
        #expect(
            header["alg"] as? String == "ES256" && header["kid"] as? String == "KEY123"
                && header["typ"] as? String == "JWT")
        #expect(
            claims["aud"] as? String == "appstoreconnect-v1" && claims["iss"] as? String == "issuer-uuid"
                && claims["bid"] as? String == "com.example.app")
        #expect((claims["iat"] as? Int) == 1_795_000_000 && (claims["exp"] as? Int)! > 1_795_000_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(ArraySlice(parts[2].utf8))!)
        #expect(Self.key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test("history pages are followed by revision; query parameters and bodies are as Apple documents them")
    func endpoints() async throws {
        let fake = FakeServerAPI([
            (
                200, [:],
                #"{"revision":"r1","hasMore":true,"signedTransactions":["t1","t2"],"bundleId":"com.example.app"}"#
            ),
            (200, [:], #"{"revision":"r2","hasMore":false,"signedTransactions":["t3"]}"#),
            (
                200, [:],
                #"{"notificationHistory":[{"signedPayload":"n1"},{"signedPayload":"n2"}],"hasMore":true,"paginationToken":"p2"}"#
            ),
            (200, [:], #"{"status":0,"signedTransactions":["o1"]}"#),
            (202, [:], ""),
            (200, [:], #"{"testNotificationToken":"tok-1"}"#),
        ])
        let client = try await Self.client(fake)
        #expect(
            try await client.fullTransactionHistory(transactionID: "1234", query: [("sort", "ASCENDING")]) == [
                "t1", "t2", "t3",
            ])
        let page = try await client.notificationHistory(
            startDate: 1, endDate: 2, notificationType: "REFUND", paginationToken: "p1")
        #expect(page.signedPayloads == ["n1", "n2"] && page.hasMore && page.paginationToken == "p2")
        #expect(try await client.lookUpOrderID("MQ5LMD9QXK").signedTransactions == ["o1"])
        try await client.sendConsumptionInformation(transactionID: "49571273", json: #"{"customerConsented":true}"#)
        #expect(try await client.requestTestNotification() == "tok-1")
        let urls = fake.requests.withLock {
            $0.map { "\($0.method) \($0.url.replacingOccurrences(of: "https://local-testing-base-url", with: ""))" }
        }
        #expect(
            urls == [
                "GET /inApps/v2/history/1234?sort=ASCENDING", "GET /inApps/v2/history/1234?sort=ASCENDING&revision=r1",
                "POST /inApps/v1/notifications/history?paginationToken=p1", "GET /inApps/v1/lookup/MQ5LMD9QXK",
                "PUT /inApps/v1/transactions/consumption/49571273", "POST /inApps/v1/notifications/test",
            ])
        #expect(fake.requests.withLock { $0[2].body } == #"{"startDate":1,"endDate":2,"notificationType":"REFUND"}"#)
    }

    @Test("429 waits for Retry-After; retryable codes and 5xx are retried; other API errors are typed and final")
    func errors() async throws {
        let sleeps = Sleeps()
        let limited = FakeServerAPI([
            (429, ["Retry-After": "7"], #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#),
            (200, [:], #"{"signedTransactionInfo":"x.y.z"}"#),
        ])
        #expect(try await Self.client(limited, sleeps: sleeps).transactionInfo(transactionID: "1") == "x.y.z")
        #expect(sleeps.recorded.withLock { $0 } == [.seconds(7)])

        let internalError = FakeServerAPI([
            (500, [:], #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#),
            (200, [:], #"{"signedTransactionInfo":"ok"}"#),
        ])
        #expect(try await Self.client(internalError).transactionInfo(transactionID: "1") == "ok")
        let notFound = FakeServerAPI([(404, [:], #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)])
        await #expect(
            throws: AppStoreServerAPIError.api(status: 404, code: 4_040_010, message: "Transaction id not found.")
        ) {
            try await Self.client(notFound).transactionInfo(transactionID: "1")
        }
        #expect(notFound.requests.withLock { $0.count } == 1)
        let unknown = FakeServerAPI([(400, [:], #"{"errorCode":9990000,"errorMessage":"Testing error."}"#)])
        await #expect(throws: AppStoreServerAPIError.api(status: 400, code: 9_990_000, message: "Testing error.")) {
            try await Self.client(unknown).transactionInfo(transactionID: "1")
        }
        let always = FakeServerAPI([(429, [:], ""), (429, [:], ""), (429, [:], "")])
        await #expect(throws: AppStoreServerAPIError.rateLimited(retryAfter: nil)) {
            try await Self.client(always).transactionInfo(transactionID: "1")
        }
        let garbage = FakeServerAPI([(200, [:], "not json")])
        await #expect(throws: AppStoreServerAPIError.self) {
            try await Self.client(garbage).transactionInfo(transactionID: "1")
        }
        await #expect(throws: AppStoreServerAPIError.self) {
            _ = try await AppStoreServerAPIClient(signingKey: "not a key", keyID: "K", issuerID: "I", bundleID: "B")
        }
    }
}
