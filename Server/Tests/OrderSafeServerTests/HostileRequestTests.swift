import ChannelSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerTestSupport
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// Requests an attacker with no credentials can send: each one used to crash the process or fail open.
@Suite("Hostile requests: nothing from outside traps, and the sandbox never fails open")
struct HostileRequestTests {
    static let extremes = ["-9223372036854775808", "9223372036854775807", "-1", "99999999999999999999"]

    @Test("a Wechatpay-Timestamp at Int64's edges is refused, not a trap on abs(now - timestamp)")
    func wechatpayTimestamp() async throws {
        try await TestServer.run { client in
            for timestamp in Self.extremes {
                let headers: HTTPFields = [
                    HTTPField.Name("Wechatpay-Timestamp")!: timestamp, HTTPField.Name("Wechatpay-Nonce")!: "n",
                    HTTPField.Name("Wechatpay-Signature")!: "c2ln", HTTPField.Name("Wechatpay-Serial")!: "PUB_KEY_ID_0",
                    .contentType: "application/json",
                ]
                let response = try await client.execute(
                    uri: "/v1/notify/wechatpay", method: .post, headers: headers, body: TestServer.json(#"{"id":"x"}"#))
                #expect((400..<500).contains(response.status.code), "\(timestamp): \(response.status)")
            }
        }
    }

    @Test(
        "an empty notification body is a 400 on every channel, not a 5xx from storing it (SQLite binds empty bytes as NULL)"
    )
    func emptyNotificationBodies() async throws {
        try await TestServer.run { client in
            let wechatpayHeaders: HTTPFields = [
                HTTPField.Name("Wechatpay-Timestamp")!: "", HTTPField.Name("Wechatpay-Nonce")!: "",
                HTTPField.Name("Wechatpay-Signature")!: "", HTTPField.Name("Wechatpay-Serial")!: "",
            ]
            for (uri, headers) in [
                ("/v1/notify/appstore", HTTPFields()), ("/v1/notify/wechatpay", wechatpayHeaders),
                ("/v1/notify/alipay", HTTPFields()),
            ] {
                let response = try await client.execute(uri: uri, method: .post, headers: headers)
                #expect(response.status == .badRequest, "\(uri): \(response.status)")
            }
        }
    }

    @Test("the WeChat Pay sandbox refuses a merchant Authorization timestamp at Int64's edges and odd query strings")
    func wechatpaySandboxAuthorization() async throws {
        try await TestServer.run { client in
            for timestamp in Self.extremes {
                let authorization =
                    #"WECHATPAY2-SHA256-RSA2048 mchid="1900000001",nonce_str="n",signature="c2ln",timestamp="\#(timestamp)",serial_no="AB""#
                let response = try await client.execute(
                    uri: "/sandbox/wechatpay/v3/certificates", method: .get, headers: [.authorization: authorization])
                #expect(response.status == .unauthorized, "\(timestamp)")
            }
            for query in ["?=", "?&&=&", "?a==b", "?=x"] {
                let response = try await client.execute(uri: "/sandbox/wechatpay/v3/certificates\(query)", method: .get)
                #expect(response.status == .unauthorized, "\(query)")
            }
        }
    }

    @Test("TimestampWindow holds at Int64's edges")
    func timestampWindow() {
        #expect(TimestampWindow.contains(1_000, now: 1_200, seconds: 300))
        #expect(TimestampWindow.contains(1_500, now: 1_200, seconds: 300))
        #expect(!TimestampWindow.contains(1_501, now: 1_200, seconds: 300))
        #expect(!TimestampWindow.contains(.min, now: 1_795_000_000, seconds: 300))
        #expect(!TimestampWindow.contains(.max, now: -1, seconds: 300))
        // Int64.min - Int64.max wraps to 1: only the overflow check tells these apart.
        #expect(!TimestampWindow.contains(.max, now: .min, seconds: 300))
        #expect(!TimestampWindow.contains(.min, now: .max, seconds: 300))
        #expect(TimestampWindow.contains(.max, now: .max, seconds: 0))
        #expect(Date(millisecondsSince1970: .max).millisecondsSince1970 == .max)
        #expect(Date(millisecondsSince1970: .min).millisecondsSince1970 == .min)
    }

    @Test("sandbox mode refuses a non-loopback host unless explicitly allowed")
    func sandboxHost() async throws {
        for host in ["0.0.0.0", "::", "10.0.0.5", "example.com"] {
            do {
                _ = try await SettingsLoader.load(environment: ["ORDERSAFE_SERVER_HOST": host])
                Issue.record("sandbox on \(host) accepted")
            } catch let error as SettingsError {
                #expect(error.key == "server.host")
                #expect(error.description.contains("server.allow_public_sandbox"))
            }
        }
        for host in ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"] {
            #expect(try await SettingsLoader.load(environment: ["ORDERSAFE_SERVER_HOST": host]).server.host == host)
        }
        let allowed = try await SettingsLoader.load(
            environment: ["ORDERSAFE_SERVER_HOST": "0.0.0.0", "ORDERSAFE_SERVER_ALLOW_PUBLIC_SANDBOX": "true"])
        #expect(allowed.server.allowsPublicSandbox)
        let production = try await TestServer.settings(extra: [
            "ORDERSAFE_SERVER_ENVIRONMENT": "production", "ORDERSAFE_SERVER_HOST": "0.0.0.0",
        ])
        #expect(production.server.host == "0.0.0.0")
    }

    @Test("production never mounts /sandbox, even with two channels unconfigured")
    func productionHasNoSandbox() async throws {
        let production = try await TestServer.productionSettings(selling: [.alipay])
        let app = try await OrderSafeApplication.build(
            settings: production, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        try await app.test(.router) { client in
            for uri in [
                "/sandbox/appstore/receipt", "/sandbox/wechatpay/v3/certificates", "/sandbox/alipay/pay",
                "/sandbox/wechatpay/pay", "/sandbox/appstore/purchase",
            ] {
                for method in [HTTPRequest.Method.get, .post] {
                    let response = try await client.execute(uri: uri, method: method, body: TestServer.json("{}"))
                    #expect(response.status == .notFound, "\(method) \(uri)")
                }
            }
            // The contract it publishes lists what it serves: no simulator, no route of a channel it has no account for.
            let document = String(buffer: try await client.execute(uri: "/openapi.json", method: .get).body)
            #expect(document.contains(#""/v1/orders""#) && document.contains(#""/v1/notify/alipay""#))
            #expect(!document.contains(#""/sandbox/"#) && !document.contains(#""/v1/notify/wechatpay""#))
        }
        try await TestServer.run { client in
            let response = try await client.execute(
                uri: "/sandbox/alipay/pay", method: .post, body: TestServer.json(""))
            #expect(response.status != .notFound)
            let document = String(buffer: try await client.execute(uri: "/openapi.json", method: .get).body)
            #expect(document.contains(#""/sandbox/alipay/pay""#))
        }
    }

    @Test("an operator action that takes no body refuses one of 300 KB (413) and takes an empty object")
    func actionsTakeNoBody() async throws {
        try await TestServer.run { client in
            let admin = TestServer.bearer(TestServer.adminKey)
            for uri in ["/v1/admin/appstore/held/replay", "/v1/admin/inbox/1/replay", "/v1/admin/orders/OS1/query"] {
                let large = try await client.execute(
                    uri: uri, method: .post, headers: admin,
                    body: TestServer.json(#"{"x":""# + String(repeating: "a", count: 300_000) + #""}"#))
                #expect(large.status == .contentTooLarge, "\(uri)")
                #expect(try large.errorCode() == "body_too_large")
            }
            let empty = try await client.execute(
                uri: "/v1/admin/appstore/held/replay", method: .post, headers: admin, body: TestServer.json("{}"))
            #expect(empty.status == .ok)
        }
    }

    @Test("sandbox transactions are never minted on a production configuration")
    func noMintingInProduction() async throws {
        let production = try await TestServer.productionSettings(selling: [.alipay])
        #expect(throws: SettingsError.self) {
            _ = try SandboxProviders.appStoreMinter(settings: production.server)
        }
        #expect(!FileManager.default.fileExists(atPath: production.server.dataDirectory + "/sandbox/appstore-ca.json"))
    }

    @Test("production refuses to start while its catalog sells through a channel it has no account for, naming each")
    func productionNeedsEveryChannelItSells() async throws {
        let bare = try await TestServer.settings(extra: ["ORDERSAFE_SERVER_ENVIRONMENT": "production"])
        do {
            _ = try await OrderSafeApplication.build(
                settings: bare, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
            Issue.record("production started without any channel account")
        } catch let error as SettingsError {
            #expect(error.key == "appstore.bundle_id")
            for fragment in ["appstore.bundle_id", "alipay.app_id", "wechatpay.mch_id", "'gift_box'", "'coins_60'"] {
                #expect(error.description.contains(fragment), "\(fragment) in \(error)")
            }
        }
        let alipayOnly = try await TestServer.productionSettings(selling: [.alipay, .wechatPay])
        do {
            _ = try await OrderSafeApplication.build(
                settings: alipayOnly, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
            Issue.record("production started selling WeChat Pay without its account")
        } catch let error as SettingsError {
            #expect(error.key == "wechatpay.mch_id" && !error.description.contains("alipay.app_id"), "\(error)")
        }
    }
}
