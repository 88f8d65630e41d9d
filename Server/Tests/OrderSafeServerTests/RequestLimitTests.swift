import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import Engine
@testable import OrderSafeServer

#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP connection to a live server, for what an HTTP client library will not do: send a request slowly.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends `text`; false once the server has closed the connection.
    func send(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } >= 0
    }

    /// True when the server has closed the connection by now (a read that does not wait finds end of file or a reset).
    func isClosedNow() -> Bool {
        var byte: UInt8 = 0
        let read = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
        return read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// What the server sends within `seconds`, up to 4 KiB.
    func receive(within seconds: Int = 3) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<(seconds * 5) {
            let read = recv(fd, &buffer, buffer.count - bytes.count, 0)
            if read > 0 { bytes += buffer.prefix(read) }
            if read == 0 || bytes.count >= 4096 || String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True when the server closed the connection (a read returns end of file or a reset).
    func isClosed() -> Bool {
        var byte: UInt8 = 0
        let read = recv(fd, &byte, 1, 0)
        return read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }
}

@Suite("Request limits: rates per user and per address, slow clients cut off, provider queries cooled down")
struct RequestLimitTests {
    @Test(
        "a user past their rate gets 429 with Retry-After; the bucket refills with time; other users are not affected")
    func perUser() async throws {
        try await TestServer.withComponents(extra: ["ORDERSAFE_LIMITS_PER_USER_PER_MINUTE": "60"]) { client, _, clock in
            let alice = try await TestServer.token("alice")
            let bob = try await TestServer.token("bob")
            func entitlements(_ token: String) async throws -> TestResponse {
                try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            }
            for _ in 0..<10 { #expect(try await entitlements(alice).status == .ok) }
            let limited = try await entitlements(alice)
            #expect(limited.status == .tooManyRequests)
            #expect(try limited.errorCode() == "rate_limited")
            #expect(limited.headers[.retryAfter] == "1")
            #expect(try await entitlements(bob).status == .ok)
            clock.advance(by: 1)
            #expect(try await entitlements(alice).status == .ok)
        }
    }

    @Test(
        "an address past its rate gets 429 on every route; behind a trusted proxy each forwarded client has its own bucket"
    )
    func perAddress() async throws {
        let extra = ["ORDERSAFE_LIMITS_PER_ADDRESS_PER_MINUTE": "60", "ORDERSAFE_SERVER_TRUST_FORWARDED_FOR": "true"]
        try await TestServer.withComponents(extra: extra) { client, _, _ throws in
            func catalog(_ forwarded: String) async throws -> HTTPResponse.Status {
                try await client.execute(uri: "/v1/catalog", method: .get, headers: [.xForwardedFor: forwarded]).status
            }
            for _ in 0..<10 { #expect(try await catalog("203.0.113.7") == .ok) }
            #expect(try await catalog("203.0.113.7") == .tooManyRequests)
            // The client's own entries before the proxy's are not believed: the proxy's last entry decides.
            #expect(try await catalog("198.51.100.1, 203.0.113.7") == .tooManyRequests)
            #expect(try await catalog("203.0.113.8") == .ok)
        }
    }

    @Test(
        "behind one address (carrier-grade NAT) signed-in users are limited each on their own; forged tokens spend the address's budget"
    )
    func carrierGradeNAT() async throws {
        let extra = [
            "ORDERSAFE_LIMITS_PER_ADDRESS_PER_MINUTE": "60", "ORDERSAFE_LIMITS_PER_USER_PER_MINUTE": "60",
            "ORDERSAFE_SERVER_TRUST_FORWARDED_FOR": "true",
        ]
        try await TestServer.withComponents(extra: extra) { client, _, _ in
            func entitlements(_ token: String) async throws -> TestResponse {
                var headers = TestServer.bearer(token)
                headers[.xForwardedFor] = "203.0.113.7"
                return try await client.execute(uri: "/v1/me/entitlements", method: .get, headers: headers)
            }
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<40 {
                let token = try await TestServer.token("phone\(index)")
                for _ in 0..<5 { statuses.append(try await entitlements(token).status) }
            }
            #expect(statuses.allSatisfy { $0 == .ok }, "200 requests of 40 users behind one address: \(Set(statuses))")
            let busy = try await TestServer.token("busy")
            for _ in 0..<10 { #expect(try await entitlements(busy).status == .ok) }
            #expect(try await entitlements(busy).status == .tooManyRequests, "a user past their own budget")
            var forged: [HTTPResponse.Status] = []
            for index in 0..<11 { forged.append(try await entitlements("forged.token.\(index)").status) }
            #expect(
                forged.prefix(10).allSatisfy { $0 == .unauthorized } && forged.last == .tooManyRequests, "\(forged)")
            let catalog = try await client.execute(
                uri: "/v1/catalog", method: .get, headers: [.xForwardedFor: "203.0.113.7"])
            #expect(catalog.status == .tooManyRequests, "anonymous requests share the budget forged tokens spent")
            let elsewhere = try await client.execute(
                uri: "/v1/catalog", method: .get, headers: [.xForwardedFor: "203.0.113.8"])
            #expect(elsewhere.status == .ok && elsewhere.headers[.cacheControl] == "public, max-age=300")
        }
    }

    @Test("repeated client-result hints ask the provider once per cooldown")
    func clientResultCooldown() {
        let clock = ManualClock(TestServer.now)
        let cooldown = Cooldown(interval: 5, clock: clock)
        #expect(cooldown.claim("OS1") && !cooldown.claim("OS1") && cooldown.claim("OS2"))
        clock.advance(by: 5)
        #expect(cooldown.claim("OS1"))
    }

    /// A live server with one-second request timeouts (unless `extra` says otherwise); `body` gets its port.
    /// A listening server on a free port. `connectFirst`: the harness's own connection is made (one health request)
    /// before `body`, so a test that floods the port never races it for the listen backlog; only with an idle timeout
    /// longer than a loaded machine takes to connect (the default one second would close it first).
    static func withLiveServer(
        extra: [String: String] = [:], connectFirst: Bool = false,
        _ body: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        let settings = try await TestServer.settings(
            extra: [
                "ORDERSAFE_SERVER_IDLE_TIMEOUT_SECONDS": "1", "ORDERSAFE_SERVER_REQUEST_TIMEOUT_SECONDS": "1",
                "ORDERSAFE_SERVER_PORT": "0",
            ].merging(extra) { $1 })
        let app = try await OrderSafeApplication.build(
            settings: settings, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        try await app.test(.live) { client in
            if connectFirst { _ = try await client.execute(uri: "/healthz", method: .get) }
            try await body(client.port!)
        }
    }

    /// With 1-second timeouts, a trickling client is cut off within this; held open, it would still be sending when
    /// ``observed`` ends. Far from the second it takes alone: `swift test` runs every suite at once on two cores (a
    /// close that took 4 s once failed a tighter bound), and a limit here catches a connection held open, not a slow
    /// close.
    static let cutOffWithin = Duration.seconds(60)
    static let observed = Duration.seconds(90)

    /// Sends `pieces` every 200 ms until the server closes the connection; the seconds that took, or nil if it never did.
    static func secondsUntilClosed(_ connection: RawConnection, trickling piece: String, for limit: Duration)
        async throws -> Duration?
    {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if !connection.send(piece) || connection.isClosed() { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(200))
        }
        return nil
    }

    @Test("headers trickled a line at a time are cut off after the head timeout, not held open")
    func slowHeaders() async throws {
        try await Self.withLiveServer { port in
            let connection = try RawConnection(port: port)
            #expect(connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n"))
            let closed = try await Self.secondsUntilClosed(
                connection, trickling: "X-Slow: 1\r\n", for: Self.observed)
            #expect(closed != nil && closed! < Self.cutOffWithin, "\(String(describing: closed))")
        }
    }

    @Test("a body trickled a byte at a time is cut off after the request timeout")
    func slowBody() async throws {
        try await Self.withLiveServer { port in
            let connection = try RawConnection(port: port)
            #expect(
                connection.send(
                    "POST /v1/notify/appstore HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
                ))
            let closed = try await Self.secondsUntilClosed(connection, trickling: " ", for: Self.observed)
            #expect(closed != nil && closed! < Self.cutOffWithin, "\(String(describing: closed))")
        }
    }
}
