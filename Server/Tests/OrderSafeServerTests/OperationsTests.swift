import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOHTTP1
import OrderSafeModel
import Testing

@testable import OrderSafeServer

@Suite("Operations endpoints, request ids, error envelope")
struct OperationsTests {
    @Test("health, readiness and the OpenAPI document answer")
    func health() async throws {
        try await TestServer.run { client in
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
            #expect(String(buffer: health.body) == #"{"status":"ok"}"#)
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            let openapi = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(openapi.status == .ok)
            #expect(String(buffer: openapi.body).contains(#""openapi""#))
        }
    }

    @Test("metrics count requests by route and status")
    func metrics() async throws {
        let alice = try await TestServer.token("alice")
        try await TestServer.run { client in
            _ = try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            _ = try await client.execute(uri: "/v1/me/entitlements", method: .get)
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            let text = String(buffer: metrics.body)
            // The registry is process-wide and tests run in parallel: check the series exist, not their counts.
            let route = #"http_route="/v1/me/entitlements",http_request_method="GET""#
            #expect(text.contains(#"hb_requests{\#(route),http_response_status_code="200"}"#))
            #expect(text.contains(#"hb_requests{\#(route),http_response_status_code="401"}"#))
            #expect(text.contains(#"http_server_request_duration_count{\#(route),http_response_status_code="200"}"#))
        }
    }

    @Test(
        "a request whose client went away mid-body (HTTP parser: stream ended early) is the client's 400, not a 500 of the server's"
    )
    func requestCutShort() async throws {
        // What the chaos runs' killed phones make: the body's stream ends before its Content-Length.
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorEnvelopeMiddleware())
        router.post("/cut") { _, _ -> String in throw HTTPParserError.invalidEOFState }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/cut", method: .post)
            #expect(response.status == .badRequest)
            #expect(try response.errorCode() == "bad_request")
        }
    }

    @Test("unknown routes and methods get the JSON error body")
    func unknownRoute() async throws {
        try await TestServer.run { client in
            let response = try await client.execute(uri: "/v1/nothing-here", method: .get)
            #expect(response.status == .notFound)
            #expect(try response.errorCode() == "not_found")
        }
    }

    @Test("request ids are echoed when well-formed and generated otherwise")
    func requestIDs() async throws {
        try await TestServer.run { client in
            let echoed = try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: "abc-123"])
            #expect(echoed.headers[.requestID] == "abc-123")
            let replaced = try await client.execute(
                uri: "/healthz", method: .get, headers: [.requestID: "bad id\u{7F}"])
            #expect(replaced.headers[.requestID] != nil)
            #expect(replaced.headers[.requestID] != "bad id\u{7F}")
            let generated = try await client.execute(uri: "/v1/nothing", method: .get)
            #expect(generated.headers[.requestID]?.isEmpty == false)
        }
    }

    @Test("ES256 tokens verify with the configured public key")
    func es256() async throws {
        let key = P256.Signing.PrivateKey()
        let settings = try await TestServer.settings(extra: [
            "ORDERSAFE_AUTH_JWT_ALGORITHM": "ES256", "ORDERSAFE_AUTH_JWT_PUBLIC_KEY": key.publicKey.pemRepresentation,
            "ORDERSAFE_AUTH_JWT_ISSUER": "merchant-backend",
        ])
        let app = try await OrderSafeApplication.build(
            settings: settings, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        func token(issuer: String, signer: P256.Signing.PrivateKey) throws -> String {
            let exp = Int(TestServer.now.timeIntervalSince1970) + 600
            let input =
                AuthTests.base64URL(#"{"alg":"ES256","typ":"JWT"}"#) + "."
                + AuthTests.base64URL(#"{"sub":"carol","exp":\#(exp),"iss":"\#(issuer)"}"#)
            return input + "." + TestServer.base64URL(try signer.signature(for: Data(input.utf8)).rawRepresentation)
        }
        let good = try token(issuer: "merchant-backend", signer: key)
        let wrongIssuer = try token(issuer: "someone-else", signer: key)
        let wrongKey = try token(issuer: "merchant-backend", signer: P256.Signing.PrivateKey())
        let hs256 = try await TestServer.token("carol")
        try await app.test(.router) { client in
            let ok = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(good))
            #expect(ok.status == .ok)
            #expect(try ok.decoded(HoldingsResponse.self).userID == "carol")
            for bad in [wrongIssuer, wrongKey, hs256] {
                let response = try await client.execute(
                    uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(bad))
                #expect(response.status == .unauthorized)
            }
        }
    }
}
