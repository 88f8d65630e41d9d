import AppStore
import Crypto
import Foundation
import OrderSafeModel
import Sandbox
import SwiftASN1

/// StoreKit 2 transaction JWS verification (split, chain from the cache, ES256, decode, checks) against the raw
/// P-256 signature checks it is built on, on one core. With `--export DIR` it also writes the JWS and the root it
/// chains to, so `scripts/bench/bench-appstore` can time Apple's Python library on the very same input.
enum AppStoreBenchmark {
    static let transaction =
        #"{"transactionId":"2000000812345678","originalTransactionId":"2000000812345678","webOrderLineItemId":"0","bundleId":"com.example.app","productId":"com.example.coins60","purchaseDate":1795000100000,"originalPurchaseDate":1795000100000,"quantity":1,"type":"Consumable","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","inAppOwnershipType":"PURCHASED","signedDate":1795000100000,"environment":"Sandbox","transactionReason":"PURCHASE","storefront":"CHN","storefrontId":"143465","price":6000,"currency":"CNY","appTransactionId":"704330171234567890"}"#

    static func run(export: String?) async throws -> Bool {
        let authority = try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000))
        let jws = try authority.sign(transaction)
        if let export {
            try FileManager.default.createDirectory(atPath: export, withIntermediateDirectories: true)
            try Data(jws.utf8).write(to: URL(fileURLWithPath: export + "/transaction.jws"))
            try Data(authority.rootDER).write(to: URL(fileURLWithPath: export + "/root.der"))
        }
        let verifier = SignedDataVerifier(
            rootCertificates: try AppleRootCertificates.load([authority.rootDER], requireApple: false),
            bundleID: "com.example.app",
            appAppleID: nil, environment: .sandbox)
        _ = try await verifier.verifyTransaction(jws)

        // The baseline: the same ES256 check on the same signing input with a key at hand.
        let parts = jws.split(separator: ".")
        let input = Data(parts[0...1].joined(separator: ".").utf8)
        let key = P256.Signing.PrivateKey()
        let signature = try key.signature(for: input)
        let publicKey = key.publicKey
        let raw = await operationsPerSecond {
            guard publicKey.isValidSignature(signature, for: input) else { fatalError("baseline") }
        }
        let ours = try await operationsPerSecond { _ = try await verifier.verifyTransaction(jws) }
        print("App Store (one core, release build)")
        report("raw P-256 ECDSA verifications (swift-crypto)", raw)
        report("transaction JWS verifications (chain cached)", ours)
        print(String(format: "  ratio to raw P-256 verify: %.2f (target ≥ 0.60)", ours / raw))
        print(String(format: "  target ≥ 10000/s: %@", ours >= 10_000 ? "met" : "NOT met"))
        if export != nil { print(String(format: "ours_per_second=%.0f", ours)) }
        let receiptsMet = try await receipts()
        return ours >= 10_000 && ours / raw >= 0.6 && receiptsMet
    }

    /// Receipt parsing (container, attributes, four purchases) beside the BER parse of the container alone, on the
    /// real 4-purchase production receipt of `../shared/vectors` (skipped, loudly, when the folder is absent).
    static func receipts() async throws -> Bool {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/vectors/appstore/receipts/receipt-production")
            .path
        guard let data = FileManager.default.contents(atPath: path) else {
            print("⚠️  ../shared/vectors is missing: the receipt benchmark is SKIPPED")
            return true
        }
        let der = try ReceiptParser.bytes(Array(data))
        guard try ReceiptParser.parse(der).inApp.count == 4 else {
            fatalError("expected the 4-purchase production receipt")
        }
        let container = await operationsPerSecond { _ = try? BER.parse(der) }
        let parses = try await operationsPerSecond { _ = try ReceiptParser.parse(der) }
        report("BER parse of the receipt container (swift-asn1)", container)
        report("receipt parses (4 purchases, every field)", parses)
        print(String(format: "  ratio to the container parse: %.2f", parses / container))
        print(String(format: "  target ≥ 20000/s: %@", parses >= 20_000 ? "met" : "NOT met"))
        return parses >= 20_000
    }
}
