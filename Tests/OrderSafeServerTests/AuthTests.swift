import Crypto
import OrderSafeModel
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Authentication")
struct AuthTests {
    static func base64URL(_ text: String) -> String { TestServer.base64URL(Data(text.utf8)) }

    static func hs256(header: String, payload: String, secret: String = TestServer.jwtSecret) -> String {
        let input = "\(base64URL(header)).\(base64URL(payload))"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "\(input).\(TestServer.base64URL(Data(mac)))"
    }

    static let future = Int(TestServer.now.timeIntervalSince1970) + 3600

    @Test("requests without a valid token are 401 with the API's error body", arguments: [
        ("", "no header"),
        ("Bearer", "empty bearer"),
        ("Basic YWxpY2U6cHc=", "basic auth"),
        ("Bearer not-a-jwt", "garbage"),
        ("Bearer a.b.c", "bad base64"),
        ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(future)}"#, secret: "another-secret-another-secret-0000"), "forged signature"),
        ("Bearer " + base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + base64URL(#"{"sub":"alice","exp":\#(future)}"#) + ".", "alg none"),
        ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice"}"#), "no exp"),
        ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"exp":\#(future)}"#), "no sub"),
        ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"","exp":\#(future)}"#), "empty sub"),
        ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(future - 7200)}"#), "expired"),
    ])
    func rejected(authorization: String, label: String) async throws {
        try await TestServer.run { client in
            let headers: HTTPFields = authorization.isEmpty ? [:] : [.authorization: authorization]
            let response = try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: headers)
            #expect(response.status == .unauthorized, "\(label)")
            #expect(try response.errorCode() == "unauthorized", "\(label)")
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
        }
    }

    @Test("a hand-made HS256 token with the shared secret is accepted, and expiry follows the injected clock")
    func acceptedAndExpiry() async throws {
        let token = Self.hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(Self.future)}"#)
        try await TestServer.run { client in
            let response = try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            #expect(response.status == .ok)
        }
        try await TestServer.run(clock: TestServer.now.addingTimeInterval(3601)) { client in
            let response = try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            #expect(response.status == .unauthorized)
        }
    }

    @Test("admin endpoints need the admin key, not a user token")
    func admin() async throws {
        let alice = try await TestServer.token("alice")
        try await TestServer.run { client in
            let created = try await TestServer.createOrder(client, token: alice)
            let orderNo = try created.decoded(OrderResponse.self).order.orderNo
            for authorization in ["", "Bearer \(alice)", "Bearer \(TestServer.adminKey)x", "\(TestServer.adminKey)"] {
                let headers: HTTPFields = authorization.isEmpty ? [:] : [.authorization: authorization]
                let response = try await client.execute(uri: "/v1/admin/orders/\(orderNo)", method: .get, headers: headers)
                #expect(response.status == .unauthorized)
            }
            let response = try await client.execute(
                uri: "/v1/admin/orders/\(orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(response.status == .ok)
            let body = String(buffer: response.body)
            #expect(body.contains(#""kind":"created""#))
            #expect(body.contains(#""cause":"app""#))
        }
    }
}
