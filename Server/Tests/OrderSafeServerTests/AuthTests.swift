import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import OrderSafeModel
import OrderSafeServer
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

    @Test(
        "requests without a valid token are 401 with the API's error body",
        arguments: [
            ("", "no header"),
            ("Bearer", "empty bearer"),
            ("Basic YWxpY2U6cHc=", "basic auth"),
            ("Bearer not-a-jwt", "garbage"),
            ("Bearer a.b.c", "bad base64"),
            (
                "Bearer "
                    + hs256(
                        header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(future)}"#,
                        secret: "another-secret-another-secret-0000"), "forged signature"
            ),
            (
                "Bearer " + base64URL(#"{"alg":"none","typ":"JWT"}"#) + "."
                    + base64URL(#"{"sub":"alice","exp":\#(future)}"#) + ".", "alg none"
            ),
            ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice"}"#), "no exp"),
            ("Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"exp":\#(future)}"#), "no sub"),
            (
                "Bearer " + hs256(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"","exp":\#(future)}"#),
                "empty sub"
            ),
            (
                "Bearer "
                    + hs256(
                        header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(future - 7200)}"#),
                "expired"
            ),
            (
                "Bearer "
                    + hs256(
                        header: #"{"alg":"HS256","typ":"JWT"}"#,
                        payload: #"{"sub":"alice","sub":"mallory","exp":\#(future)}"#), "duplicate sub"
            ),
            (
                "Bearer "
                    + hs256(
                        header: #"{"alg":"HS256","typ":"JWT"}"#,
                        payload: #"{"sub":"alice","exp":\#(future),"exp":\#(future + 9_999_999)}"#), "duplicate exp"
            ),
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

    static let nowSeconds = Int(TestServer.now.timeIntervalSince1970)
    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    @Test(
        "token rules: nbf, iat, lifetime, crit, the header's alg and invisible characters in sub",
        arguments: [
            (
                hs256(header: header, payload: #"{"sub":"alice","exp":\#(future),"nbf":\#(nowSeconds + 600)}"#),
                "nbf ten minutes ahead"
            ),
            (
                hs256(header: header, payload: #"{"sub":"alice","exp":\#(future),"iat":\#(nowSeconds + 600)}"#),
                "iat ten minutes ahead"
            ),
            (
                hs256(
                    header: header, payload: #"{"sub":"alice","exp":\#(nowSeconds + 2 * 86400),"iat":\#(nowSeconds)}"#),
                "two-day lifetime"
            ),
            (
                hs256(header: header, payload: #"{"sub":"alice","exp":\#(nowSeconds + 2 * 86400)}"#),
                "two days left, no iat"
            ),
            (
                hs256(header: #"{"alg":"HS256","crit":["exp"]}"#, payload: #"{"sub":"alice","exp":\#(future)}"#),
                "unknown crit"
            ),
            (
                hs256(header: #"{"alg":"HS384","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(future)}"#),
                "alg other than the key's"
            ),
            (hs256(header: #"{"typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(future)}"#), "no alg"),
            (hs256(header: header, payload: #"{"sub":"ali\u202Ece","exp":\#(future)}"#), "bidi override in sub"),
            (hs256(header: header, payload: #"{"sub":"ali\u200Bce","exp":\#(future)}"#), "zero-width space in sub"),
            (hs256(header: header, payload: #"{"sub":"ali\u0085ce","exp":\#(future)}"#), "C1 control in sub"),
            (hs256(header: header, payload: #"{"sub":"ali ce","exp":\#(future)}"#), "space in sub"),
        ])
    func tokenRules(token: String, label: String) async throws {
        try await TestServer.run(extra: ["ORDERSAFE_AUTH_MAX_TOKEN_LIFETIME_SECONDS": "86400"]) { client in
            let response = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            #expect(response.status == .unauthorized, "\(label)")
        }
    }

    @Test("a minute of clock skew is tolerated on exp, nbf and iat; a day-long token from a minted iat is accepted")
    func leeway() async throws {
        let tokens = [
            Self.hs256(header: Self.header, payload: #"{"sub":"alice","exp":\#(Self.nowSeconds - 30)}"#),
            Self.hs256(
                header: Self.header,
                payload:
                    #"{"sub":"alice","exp":\#(Self.future),"nbf":\#(Self.nowSeconds + 30),"iat":\#(Self.nowSeconds + 30)}"#
            ),
            Self.hs256(
                header: Self.header,
                payload: #"{"sub":"李雷","exp":\#(Self.nowSeconds + 86400),"iat":\#(Self.nowSeconds)}"#),
            try await TestServer.token("alice", lifetime: 86400),
        ]
        try await TestServer.run(extra: ["ORDERSAFE_AUTH_MAX_TOKEN_LIFETIME_SECONDS": "86400"]) { client in
            for token in tokens {
                let response = try await client.execute(
                    uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
                #expect(response.status == .ok, "\(token)")
            }
        }
    }

    @Test("with auth.jwt_audience and auth.jwt_issuer set, only a token naming both is accepted")
    func audienceAndIssuer() async throws {
        let expectations = [
            (#"{"sub":"alice","exp":\#(Self.future),"iss":"shop","aud":"ordersafe"}"#, HTTPResponse.Status.ok),
            (#"{"sub":"alice","exp":\#(Self.future),"iss":"shop","aud":["other","ordersafe"]}"#, .ok),
            (#"{"sub":"alice","exp":\#(Self.future),"iss":"shop","aud":"another-service"}"#, .unauthorized),
            (#"{"sub":"alice","exp":\#(Self.future),"iss":"shop"}"#, .unauthorized),
            (#"{"sub":"alice","exp":\#(Self.future),"iss":"elsewhere","aud":"ordersafe"}"#, .unauthorized),
        ]
        try await TestServer.run(extra: [
            "ORDERSAFE_AUTH_JWT_AUDIENCE": "ordersafe", "ORDERSAFE_AUTH_JWT_ISSUER": "shop",
        ]) { client in
            for (payload, status) in expectations {
                let token = Self.hs256(header: Self.header, payload: payload)
                let response = try await client.execute(
                    uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
                #expect(response.status == status, "\(payload)")
            }
        }
    }

    @Test("the default maximum token lifetime is a day")
    func defaultLifetime() async throws {
        let settings = try await SettingsLoader.load(environment: [:])
        #expect(settings.auth.maxTokenLifetimeSeconds == 86400)
    }

    @Test("a hand-made HS256 token with the shared secret is accepted, and expiry follows the injected clock")
    func acceptedAndExpiry() async throws {
        let token = Self.hs256(
            header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(Self.future)}"#)
        try await TestServer.run { client in
            let response = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            #expect(response.status == .ok)
        }
        try await TestServer.run(clock: TestServer.now.addingTimeInterval(3661)) { client in
            let response = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            #expect(response.status == .unauthorized)
        }
    }

    @Test(
        "a token verified once is known by its very bytes: still checked against the clock, and a changed one verified again"
    )
    func verifiedTokensRemembered() async throws {
        let token = Self.hs256(
            header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(Self.future)}"#)
        let forged = String(token.dropLast()) + (token.last == "A" ? "B" : "A")
        let otherHeader = Self.hs256(
            header: #"{"alg":"HS256","typ":"JWT","crit":["x"]}"#, payload: #"{"sub":"alice","exp":\#(Self.future)}"#)
        try await TestServer.withComponents { (client, _, clock) async throws in
            let status = { @Sendable (token: String) async throws -> HTTPResponse.Status in
                try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
                    .status
            }
            #expect(try await status(token) == .ok)
            #expect(try await status(token) == .ok)
            #expect(try await status(forged) == .unauthorized)
            #expect(try await status(otherHeader) == .unauthorized)
            clock.advance(by: 3661)
            #expect(try await status(token) == .unauthorized)
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
                let response = try await client.execute(
                    uri: "/v1/admin/orders/\(orderNo)", method: .get, headers: headers)
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

    @Test("wrong admin keys are limited per address like console sign-ins; the right key alone never spends the budget")
    func wrongAdminKeysLimited() async throws {
        try await TestServer.withComponents { client, _, clock in
            let right = TestServer.bearer(TestServer.adminKey)
            for _ in 0..<30 {
                #expect(try await client.execute(uri: "/v1/admin/stats", method: .get, headers: right).status == .ok)
            }
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<11 {
                let wrong: HTTPFields = [.authorization: "Bearer wrong-key-\(index)-wrong-key-wrong-key-0000"]
                statuses.append(try await client.execute(uri: "/v1/admin/stats", method: .get, headers: wrong).status)
            }
            #expect(
                statuses.prefix(10).allSatisfy { $0 == .unauthorized } && statuses.last == .tooManyRequests,
                "\(statuses)")
            let locked = try await client.execute(uri: "/v1/admin/stats", method: .get, headers: right)
            #expect(
                locked.status == .tooManyRequests && locked.headers[.retryAfter] != nil,
                "the address guessing keys is held off")
            clock.advance(by: 60)
            #expect(try await client.execute(uri: "/v1/admin/stats", method: .get, headers: right).status == .ok)
        }
    }
}
