import Foundation
import Testing
import X509

@testable import AppStore

/// `../shared/vectors/appstore/receipts/EXPECTED.md`, the Xcode receipts of EXPECTED-apple-library.md §2, and
/// hostile input.
@Suite("App Store receipts (StoreKit 1)", .enabled(if: Vectors.available))
struct ReceiptTests {
    static func receipt(_ name: String) throws -> [UInt8] {
        try ReceiptParser.bytes(Array(try Data(contentsOf: Vectors.directory.appendingPathComponent(name))))
    }

    static func roots(_ name: String) throws -> [Certificate] {
        try AppleRootCertificates.load([try Vectors.der("receipts/\(name)")], requireApple: false)
    }

    static func iso(_ text: String) -> Int64 { Int64(ReceiptDate.parse(text)!.timeIntervalSince1970 * 1000) }

    @Test("every receipt decodes to the fields the vectors state")
    func decode() throws {
        let production = try ReceiptParser.parse(try Self.receipt("receipts/receipt-production"))
        #expect(production.receiptType == "Production" && production.bundleID == "org.getpure.pure-iphone")
        #expect(production.applicationVersion == "15741" && production.originalApplicationVersion == "434")
        #expect(production.receiptCreationDateMS == Self.iso("2024-02-23T17:27:16Z") && production.inApp.count == 4)
        #expect(production.inApp.contains { $0.originalTransactionID == "340001196262039" })
        #expect(production.inApp.contains { $0.promotionalOfferID != nil && !$0.promotionalOfferID!.isEmpty })

        let g5 = try ReceiptParser.parse(try Self.receipt("receipts/receipt-sandbox-g5"))
        #expect(
            g5.receiptType == "ProductionSandbox" && g5.bundleID == "dev.bonzer.weeka.app"
                && g5.applicationVersion == "2")
        #expect(g5.receiptCreationDateMS == Self.iso("2025-12-26T18:39:47Z") && g5.inApp.count == 2)
        #expect(g5.inApp.allSatisfy { $0.originalTransactionID == "2000001092134138" })

        let legacy = try ReceiptParser.parse(try Self.receipt("receipts/receipt-sandbox-legacy"))
        #expect(
            legacy.bundleID == "com.nutcall.alert" && legacy.applicationVersion == "32" && legacy.inApp.count == 187)

        let xcode = try ReceiptParser.parse(try Self.receipt("receipts/receipt-xcode"))
        #expect(
            xcode.receiptType == "Xcode" && xcode.bundleID == "net.zachariadis.cyclemaps"
                && xcode.applicationVersion == "31.10.0")
        #expect(xcode.inApp.map(\.productID) == ["CYCLEMAPS_PREMIUM"] && xcode.inApp.first?.transactionID == "0")

        let birds = try ReceiptParser.parse(try Self.receipt("receipts/receipt-xcode-with-purchases"))
        #expect(birds.bundleID == Vectors.xcodeBundle && birds.inApp.first?.productID == "pass.premium")
        #expect(birds.inApp.first?.isInIntroOfferPeriod == true)

        let empty = try ReceiptParser.parse(try Self.receipt("xcode/xcode-app-receipt-empty"))
        #expect(empty.inApp.isEmpty && empty.receiptType == "Xcode" && empty.applicationVersion == "1")
        let one = try ReceiptParser.parse(try Self.receipt("xcode/xcode-app-receipt-with-transaction"))
        let purchase = try #require(one.inApp.first)
        #expect(purchase.quantity == 1 && purchase.productID == "pass.premium" && purchase.transactionID == "0")
        #expect(
            purchase.purchaseDateMS == Self.iso("2023-10-19T01:45:36Z")
                && purchase.expiresDateMS == Self.iso("2023-11-19T01:45:36Z"))
        #expect(purchase.isInIntroOfferPeriod == true && purchase.originalTransactionID == nil)
    }

    @Test("signatures and chains validate at the receipt's creation date, against the right root")
    func validate() async throws {
        let apple = ReceiptValidator(rootCertificates: try Self.roots("AppleIncRootCertificate.cer"))
        for name in ["receipt-production", "receipt-sandbox-g5", "receipt-sandbox-legacy"] {
            guard case .valid = try await apple.validate(try Self.receipt("receipts/\(name)")) else {
                Issue.record(
                    "\(name) must validate against Apple Inc. Root at its creation date: \(try await apple.validate(try Self.receipt("receipts/\(name)")))"
                )
                continue
            }
        }
        let storeKit = ReceiptValidator(rootCertificates: try Self.roots("StoreKitTestCertificate.cer"))
        for name in ["receipt-xcode", "receipt-xcode-with-purchases"] {
            guard case .valid = try await storeKit.validate(try Self.receipt("receipts/\(name)")) else {
                Issue.record(
                    "\(name) must validate against the StoreKit test certificate: \(try await storeKit.validate(try Self.receipt("receipts/\(name)")))"
                )
                continue
            }
            // Never against Apple's root: an Xcode receipt is no proof of payment.
            guard case .invalid = try await apple.validate(try Self.receipt("receipts/\(name)")) else {
                Issue.record("\(name) validated against Apple's root")
                continue
            }
        }
        guard case .invalid = try await storeKit.validate(try Self.receipt("receipts/receipt-production")) else {
            Issue.record("a production receipt validated against the StoreKit test certificate")
            return
        }
        // One flipped byte in the signed content breaks the signature.
        var tampered = try Self.receipt("receipts/receipt-sandbox-g5")
        let payload = try ReceiptParser.payload(tampered)
        let start = try #require(Self.find(payload, in: tampered))
        tampered[start + 200] ^= 0x01
        guard case .invalid = try await apple.validate(tampered) else {
            Issue.record("a tampered receipt validated")
            return
        }
    }

    @Test("the old transaction receipt's transaction id")
    func legacy() throws {
        #expect(TransactionReceipt.transactionID(try Vectors.text("mock_signed_data/legacyTransaction")) == "33993399")
        #expect(TransactionReceipt.transactionID("bm90IGEgcmVjZWlwdA==") == nil)
        #expect(TransactionReceipt.transactionID("") == nil)
    }

    @Test("the device hash: the right identifier matches, zeros do not")
    func deviceHash() throws {
        let g5 = try ReceiptParser.parse(try Self.receipt("receipts/receipt-sandbox-g5"))
        #expect(g5.matchesDevice(UUID(uuidString: "956328D9-CC6A-47F4-BE40-6953FB0AB6C7")!))
        #expect(!g5.matchesDevice(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!))
    }

    @Test("garbage, empty, truncated and deeply nested input is refused without a crash")
    func hostile() throws {
        #expect(throws: ReceiptParser.Error.self) { try ReceiptParser.bytes(Array("invalid receipt data".utf8)) }
        #expect(throws: ReceiptParser.Error.self) { try ReceiptParser.bytes([]) }
        let der = try Self.receipt("receipts/receipt-production")
        for length in [1, 2, 10, 100, der.count / 2, der.count - 1] {
            #expect(throws: ReceiptParser.Error.self) { try ReceiptParser.parse(Array(der.prefix(length))) }
        }
        // 10,000 nested indefinite-length SEQUENCEs.
        let nested =
            Array(repeating: [UInt8]([0x30, 0x80]), count: 10_000).flatMap { $0 } + Array(repeating: 0, count: 20_000)
        #expect(throws: ReceiptParser.Error.self) { try ReceiptParser.parse(nested) }
        #expect(throws: ReceiptParser.Error.self) { try ReceiptParser.parse([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && Array(haystack[start..<start + needle.count]) == needle {
            return start
        }
        return nil
    }
}
