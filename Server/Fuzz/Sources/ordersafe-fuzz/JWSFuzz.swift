import AppStore
import Sandbox
import X509

/// Compact JWS and their headers and payloads: a local (Xcode) verifier decodes every payload model without a
/// chain; a sandbox one checks headers, the leaf's key and the signature before any payload is read.
enum JWSFuzz {
    static let authority = try! SandboxAppStoreCA(now: PinnedClock().now())
    static let local = SignedDataVerifier(
        rootCertificates: [], bundleID: "com.example.app", appAppleID: 1234, environment: .xcode)
    static let sandbox = SignedDataVerifier(
        rootCertificates: try! AppleRootCertificates.load([authority.rootDER], requireApple: false),
        bundleID: "com.example.app",
        appAppleID: 1234, environment: .sandbox, clock: PinnedClock())

    static func run(_ bytes: [UInt8]) async {
        let text = String(decoding: bytes, as: UTF8.self)
        for verifier in [local, sandbox] {
            _ = try? await verifier.verifyAny(text)
            _ = try? await verifier.verifyNotification(text)
            _ = try? await verifier.verifyTransaction(text)
        }
        // A well-signed token around the fuzzed payload: the payload decoders behind a valid signature.
        if let signed = try? authority.sign(text) { _ = try? await sandbox.verifyAny(signed) }
    }
}
