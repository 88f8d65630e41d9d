import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// Checks nothing else observed: each test fails when its check is broken (scripts/mutants.d names the breakage).
@Suite("Checks that bite: comparisons, limits")
struct ChecksThatBiteTests {
    @Test("the constant-time comparison tells apart strings that differ anywhere, not only in their last byte")
    func constantTimeComparison() {
        let token = "0123456789abcdef0123456789abcdef"
        #expect(ConsoleSessions.same(token, token))
        for position in [0, 1, 15, 30] {
            var bytes = Array(token.utf8)
            bytes[position] ^= 0x01
            #expect(!ConsoleSessions.same(Array(token.utf8), bytes), "differs at byte \(position)")
        }
        #expect(!ConsoleSessions.same("x" + token.dropFirst(), token))
        #expect(!ConsoleSessions.same(token, token + "0"), "a longer string is not the same")
        #expect(!ConsoleSessions.same("", ""), "an empty token matches nothing")
    }

    @Test("an operator key whose digest ends like the admin key's, and differs before, does not sign in")
    func operatorKeyDigest() throws {
        let admin = "admin-key-admin-key-admin-key-0123456789"
        let keys = OperatorKeys(adminKey: admin, operatorKeys: [:])
        #expect(keys.operatorName(forKey: admin) == "admin")
        let last = ConsoleSessions.digest(admin).suffix(2)  // the last byte of its SHA-256, in hex
        // One key in 256 has a digest with the same last byte: the first of them is found in a few hundred tries.
        let lookalike = try #require(
            (0..<100_000).lazy.map { "key-\($0)" }.first { ConsoleSessions.digest($0).suffix(2) == last })
        #expect(keys.operatorName(forKey: lookalike) == nil)
    }

    @Test("a rate limiter idle for an hour allows its burst, not an hour of requests at once")
    func burstIsCapped() {
        let clock = ManualClock(TestServer.now)
        let limiter = RateLimiter(perMinute: 60, burst: 5, clock: clock)
        #expect(limiter.take("idle") == nil)
        clock.advance(by: 3600)
        let allowed = (0..<100).filter { _ in limiter.take("idle") == nil }.count
        #expect(allowed == 5)
        clock.advance(by: 1)
        #expect(limiter.take("idle") == nil, "one token a second refills")
        #expect(limiter.take("idle") != nil)
    }

    @Test("notification bodies over their limit are refused before they are stored: App Store 256 KiB, Alipay 64 KiB")
    func notificationBodyLimits() async throws {
        try await TestServer.run { client in
            let tooLarge = try await client.execute(
                uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"signedPayload":""# + String(repeating: "a", count: 256 * 1024) + #""}"#))
            #expect(tooLarge.status == .contentTooLarge)
            let justUnder = try await client.execute(
                uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(
                    string: #"{"signedPayload":""# + String(repeating: "a", count: 256 * 1024 - 40) + #""}"#))
            #expect(justUnder.status != .contentTooLarge)
            let alipay = try await client.execute(
                uri: "/v1/notify/alipay", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "a=" + String(repeating: "b", count: 64 * 1024)))
            #expect(alipay.status == .contentTooLarge)
        }
    }

    @Test("a flood from one address that spends its budget leaves /healthz and /readyz answering")
    func probesHaveTheirOwnBucket() async throws {
        try await TestServer.run(extra: ["ORDERSAFE_LIMITS_PER_ADDRESS_PER_MINUTE": "60"]) { client in
            var limited = false
            for _ in 0..<30 where !limited {
                limited = try await client.execute(uri: "/v1/catalog", method: .get).status == .tooManyRequests
            }
            #expect(limited, "the flood spent the address's budget")
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
        }
    }
}
