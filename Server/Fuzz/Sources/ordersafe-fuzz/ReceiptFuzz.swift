import AppStore
import Sandbox
import X509

/// StoreKit 1 receipts: base64 or DER, PKCS#7 and the ASN.1 / TLV inside, validated against a sandbox root.
enum ReceiptFuzz {
    static let signer = try! SandboxReceiptSigner(now: PinnedClock().now())
    static let validator = ReceiptValidator(
        rootCertificates: try! AppleRootCertificates.load([signer.rootDER], requireApple: false))

    static func run(_ bytes: [UInt8]) async {
        if let der = try? ReceiptParser.bytes(bytes) {
            _ = try? ReceiptParser.parse(der)
            _ = try? await validator.validate(der)
        }
        _ = try? ReceiptParser.parse(bytes)
    }
}
