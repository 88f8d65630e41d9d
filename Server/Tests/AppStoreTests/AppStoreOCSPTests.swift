import ChannelSupport
import Crypto
import Foundation
import Sandbox
import Synchronization
import Testing

@testable import AppStore

@Suite("App Store online checks: OCSP against the sandbox authority's responder")
struct AppStoreOCSPTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let receiptSigner = try! SandboxReceiptSigner(now: now)

    /// Counts what reaches the responder, or stands in for a broken network.
    final class Responder: ProviderTransport {
        let inner: any ProviderTransport
        let override: (@Sendable () throws -> ProviderHTTPResponse)?
        let requests = Mutex(0)

        init(inner: any ProviderTransport, override: (@Sendable () throws -> ProviderHTTPResponse)? = nil) {
            self.inner = inner
            self.override = override
        }

        func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
            -> ProviderHTTPResponse
        {
            requests.withLock { $0 += 1 }
            #expect(
                method == "POST" && url == SandboxAppStoreCA.ocspURL
                    && headers["Content-Type"] == "application/ocsp-request")
            if let override { return try override() }
            return try await inner.send(method: method, url: url, headers: headers, body: body, timeout: timeout)
        }
    }

    static func store() throws -> SandboxAppStore {
        try SandboxAppStore(
            authority: try SandboxAppStoreCA(now: now), receipts: receiptSigner, bundleID: "com.example.app",
            appAppleID: 1234,
            merchantKeyID: "KEY1", merchantKey: P256.Signing.PrivateKey().publicKey, clock: FixedClock(date: now))
    }

    static func verifier(trusting store: SandboxAppStore, online: (any ProviderTransport)?) throws -> SignedDataVerifier
    {
        SignedDataVerifier(
            rootCertificates: try AppleRootCertificates.load([store.authority.rootDER], requireApple: false),
            bundleID: "com.example.app",
            appAppleID: 1234, environment: .sandbox,
            onlineChecks: online.map { OnlineRevocationCheck(transport: $0, timeout: .seconds(2)) },
            clock: FixedClock(date: now))
    }

    static func expect(
        _ verifier: SignedDataVerifier, refuses signed: String, _ matches: @escaping (VerificationError) -> Bool
    ) async {
        await #expect {
            try await verifier.verifyTransaction(signed)
        } throws: { error in
            (error as? VerificationError).map(matches) ?? false
        }
    }

    @Test("a good leaf verifies online; the responder is asked once per chain, then the verified chain is cached")
    func good() async throws {
        let store = try Self.store()
        let responder = Responder(inner: store.transport)
        let verifier = try Self.verifier(trusting: store, online: responder)
        for _ in 0..<3 {
            let (id, signed) = try await store.purchase(productID: "coins")
            #expect(try await verifier.verifyTransaction(signed).transactionId == id)
        }
        #expect(responder.requests.withLock { $0 } == 1)
    }

    @Test("offline verification never asks the responder")
    func offline() async throws {
        let store = try Self.store()
        let responder = Responder(inner: store.transport)
        _ = try await Self.verifier(trusting: store, online: nil).verifyTransaction(
            try await store.purchase(productID: "coins").signed)
        #expect(responder.requests.withLock { $0 } == 0)
    }

    @Test("a leaf the responder reports revoked is INVALID_CHAIN; the same data still verifies offline")
    func revoked() async throws {
        let store = try Self.store()
        await store.inject(.revokedLeaf)
        let signed = try await store.purchase(productID: "coins").signed
        await Self.expect(try Self.verifier(trusting: store, online: store.transport), refuses: signed) { error in
            if case .invalidChain(let reason) = error { reason.contains("revoked") } else { false }
        }
        _ = try await Self.verifier(trusting: store, online: nil).verifyTransaction(signed)
        // Later leaves are not revoked.
        _ = try await Self.verifier(trusting: store, online: store.transport).verifyTransaction(
            try await store.purchase(productID: "coins").signed)
    }

    @Test("a responder that is down, or a network that fails, is RETRYABLE_VERIFICATION_FAILURE, and nothing is cached")
    func unreachable() async throws {
        let store = try Self.store()
        let responder = Responder(inner: store.transport)
        let verifier = try Self.verifier(trusting: store, online: responder)
        await store.inject(.ocspUnavailable)
        let signed = try await store.purchase(productID: "coins").signed
        await Self.expect(verifier, refuses: signed) { error in
            if case .retryableVerificationFailure(let reason) = error { reason.contains("503") } else { false }
        }
        _ = try await verifier.verifyTransaction(signed)  // the responder is back
        #expect(responder.requests.withLock { $0 } == 2)

        let down = Responder(inner: store.transport, override: { throw URLError(.cannotConnectToHost) })
        await Self.expect(try Self.verifier(trusting: store, online: down), refuses: signed) { error in
            if case .retryableVerificationFailure = error { true } else { false }
        }
    }

    @Test("an answer that does not vouch for the leaf (garbage, another authority's responder) is INVALID_CHAIN")
    func forged() async throws {
        let store = try Self.store()
        let signed = try await store.purchase(productID: "coins").signed
        let garbage = Responder(
            inner: store.transport,
            override: { ProviderHTTPResponse(status: 200, headers: [:], body: [0x30, 0x03, 0x02, 0x01, 0x00]) })
        await Self.expect(try Self.verifier(trusting: store, online: garbage), refuses: signed) { error in
            if case .invalidChain = error { true } else { false }
        }
        let stranger = try Self.store()
        await Self.expect(try Self.verifier(trusting: store, online: stranger.transport), refuses: signed) { error in
            if case .invalidChain = error { true } else { false }
        }
    }
}
