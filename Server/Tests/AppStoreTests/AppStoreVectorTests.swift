import Crypto
import Foundation
import OrderSafeModel
import Testing
import X509

@testable import AppStore

struct FixedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}

enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/vectors/appstore")

    static let available: Bool = {
        let present = FileManager.default.fileExists(atPath: directory.path)
        if !present { print("⚠️  ../shared/vectors is missing: the App Store vector tests are SKIPPED.") }
        return present
    }()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    static func der(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(path)))
    }

    static func testRoot() throws -> [Certificate] {
        try AppleRootCertificates.load([try der("certs/testCA.der")], requireApple: false)
    }

    static func verifier(
        _ environment: AppStoreEnvironment, bundleID: String? = "com.example", appAppleID: Int64? = 1234,
        roots: [Certificate]? = nil, at: SignedDataVerifier.ValidationTime = .signed
    ) throws -> SignedDataVerifier {
        SignedDataVerifier(
            rootCertificates: try roots ?? testRoot(), bundleID: bundleID, appAppleID: appAppleID,
            environment: environment, validationTime: at)
    }

    static let xcodeBundle = "com.example.naturelab.backyardbirds.example"
}

/// Expects `body` to fail with Apple's error `name`.
func expectVerificationError(_ name: String, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(name), but it verified")
    } catch let error as VerificationError {
        #expect(error.name == name, "\(error)")
    } catch {
        Issue.record("unexpected \(error)")
    }
}

/// `../shared/vectors/appstore/EXPECTED-apple-library.md`, sections 1, 2, 4 and 5.
@Suite("App Store signed data: Apple's vectors", .enabled(if: Vectors.available))
struct AppStoreVectorTests {
    @Test("1: mock signed data: valid, wrong environment, wrong app, missing x5c, malformed")
    func mockSignedData() async throws {
        let notification = try Vectors.text("mock_signed_data/testNotification")
        let decoded = try await Vectors.verifier(.sandbox).verifyNotification(notification)
        #expect(decoded.notificationType == "TEST" && decoded.data?.bundleId == "com.example")
        await expectVerificationError("INVALID_ENVIRONMENT") {
            _ = try await Vectors.verifier(.production).verifyNotification(notification)
        }
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await Vectors.verifier(.production, appAppleID: 1235).verifyNotification(notification)
        }
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await Vectors.verifier(.sandbox, appAppleID: 1235).verifyTransaction(notification)
        }
        await expectVerificationError("INVALID_JWT_FORMAT") {
            _ = try await Vectors.verifier(.sandbox).verifyNotification(
                try Vectors.text("mock_signed_data/missingX5CHeaderClaim"))
        }
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await Vectors.verifier(.sandbox).verifyNotification(
                try Vectors.text("mock_signed_data/wrongBundleId"))
        }
        let transaction = try await Vectors.verifier(.sandbox).verifyTransaction(
            try Vectors.text("mock_signed_data/transactionInfo"))
        #expect(transaction.environment == "Sandbox" && transaction.signedDate == 1_672_956_154_000)
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await Vectors.verifier(.sandbox, bundleID: "com.example.x").verifyTransaction(
                try Vectors.text("mock_signed_data/transactionInfo"))
        }
        let renewal = try await Vectors.verifier(.sandbox).verifyRenewalInfo(
            try Vectors.text("mock_signed_data/renewalInfo"))
        #expect(renewal.environment == "Sandbox")
        for malformed in ["a.b.c.d", "a.b.c"] {
            await expectVerificationError("INVALID_JWT_FORMAT") {
                _ = try await Vectors.verifier(.localTesting).verifyNotification(malformed)
            }
        }
    }

    @Test("2: Xcode-signed transaction, renewal info and app transaction, with fractional-millisecond dates")
    func xcode() async throws {
        let verifier = try Vectors.verifier(.xcode, bundleID: Vectors.xcodeBundle)
        let transaction = try await verifier.verifyTransaction(try Vectors.text("xcode/xcode-signed-transaction"))
        #expect(
            transaction.transactionId == "0" && transaction.originalTransactionId == "0"
                && transaction.webOrderLineItemId == "0")
        #expect(transaction.productId == "pass.premium" && transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.purchaseDate == 1_697_679_936_049 && transaction.originalPurchaseDate == 1_697_679_936_049)
        #expect(transaction.expiresDate == 1_700_358_336_049 && transaction.signedDate == 1_697_679_936_056)
        #expect(
            transaction.quantity == 1 && transaction.type == .autoRenewableSubscription
                && transaction.rawType == "Auto-Renewable Subscription"
                && transaction.appAccountToken == nil)
        #expect(
            transaction.inAppOwnershipType == .purchased && transaction.isUpgraded == false
                && transaction.offerType == 1)
        #expect(
            transaction.environment == "Xcode" && transaction.storefront == "USA"
                && transaction.storefrontId == "143441")
        #expect(transaction.transactionReason == "PURCHASE" && transaction.revocationDate == nil)

        let renewal = try await verifier.verifyRenewalInfo(try Vectors.text("xcode/xcode-signed-renewal-info"))
        #expect(
            renewal.originalTransactionId == "0" && renewal.autoRenewProductId == "pass.premium"
                && renewal.autoRenewStatus == 1)
        #expect(renewal.signedDate == 1_697_679_936_711 && renewal.recentSubscriptionStartDate == 1_697_679_936_049)
        #expect(renewal.renewalDate == 1_700_358_336_049 && renewal.expirationIntent == nil)

        let app = try await verifier.verifyAppTransaction(try Vectors.text("xcode/xcode-signed-app-transaction"))
        #expect(
            app.bundleId == Vectors.xcodeBundle && app.applicationVersion == "1"
                && app.originalApplicationVersion == "1")
        #expect(app.originalPurchaseDate == -62_135_769_600_000 && app.receiptType == "Xcode" && app.appAppleId == nil)
        #expect(app.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(app.deviceVerificationNonce == "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")

        // Never outside Xcode: a production verifier finds one self-signed certificate where three must be.
        await expectVerificationError("INVALID_CHAIN_LENGTH") {
            _ = try await Vectors.verifier(.production, bundleID: Vectors.xcodeBundle).verifyAppTransaction(
                try Vectors.text("xcode/xcode-signed-app-transaction"))
        }
        await expectVerificationError("INVALID_CHAIN_LENGTH") {
            _ = try await Vectors.verifier(.sandbox, bundleID: Vectors.xcodeBundle).verifyTransaction(
                try Vectors.text("xcode/xcode-signed-transaction"))
        }
    }

    @Test("4: chain vectors: Apple's OIDs, the trusted root, and validity at the validation time")
    func chains() async throws {
        func x5c(_ names: String...) throws -> [String] {
            try names.map { Data(try Vectors.der("chain_test_certs/\($0).der")).base64EncodedString() }
        }
        let effective = Date(timeIntervalSince1970: 1_761_962_975)
        let testRoot = ChainVerifier(
            roots: try AppleRootCertificates.load(
                [try Vectors.der("chain_test_certs/ROOT_CA.der")], requireApple: false))
        _ = try await testRoot.verify(x5c: try x5c("LEAF_CERT", "INTERMEDIATE_CA", "ROOT_CA"), at: effective)
        for (chain, at) in [
            (try x5c("LEAF_CERT", "INTERMEDIATE_CA_INVALID_OID", "ROOT_CA"), effective),
            (try x5c("LEAF_CERT_INVALID_OID", "INTERMEDIATE_CA", "ROOT_CA"), effective),
            (try x5c("LEAF_CERT", "INTERMEDIATE_CA", "ROOT_CA"), Date(timeIntervalSince1970: 2_280_946_846)),
        ] {
            await expectVerificationError("INVALID_CHAIN") { _ = try await testRoot.verify(x5c: chain, at: at) }
        }
        let appleRoot = ChainVerifier(
            roots: try AppleRootCertificates.load(
                [try Vectors.der("chain_test_certs/REAL_APPLE_ROOT.der")], requireApple: true))
        await expectVerificationError("INVALID_CHAIN") {
            _ = try await appleRoot.verify(x5c: try x5c("LEAF_CERT", "INTERMEDIATE_CA", "ROOT_CA"), at: effective)
        }
        await expectVerificationError("INVALID_CHAIN_LENGTH") {
            _ = try await testRoot.verify(x5c: try x5c("LEAF_CERT", "INTERMEDIATE_CA"), at: effective)
        }
        await expectVerificationError("INVALID_CHAIN_LENGTH") {
            _ = try await testRoot.verify(
                x5c: try x5c("LEAF_CERT", "INTERMEDIATE_CA", "ROOT_CA", "ROOT_CA"), at: effective)
        }
        // Apple's published fingerprint names the real root; our test CA is refused as a production root.
        #expect(
            AppleRootCertificates.fingerprints[
                AppleRootCertificates.fingerprint(try Vectors.der("chain_test_certs/REAL_APPLE_ROOT.der"))]
                == "Apple Root CA - G3")
        #expect(throws: VerificationError.self) {
            try AppleRootCertificates.load([try Vectors.der("certs/testCA.der")], requireApple: true)
        }
    }

    @Test(
        "5: Apple's renewal info has no bundleId: accepted by a verifier that checks one, INVALID_ENVIRONMENT in Production"
    )
    func realRenewalInfoEnvironment() async throws {
        let roots = try AppleRootCertificates.load(
            [try Vectors.der("chain_test_certs/REAL_APPLE_ROOT.der")], requireApple: true)
        let jws = try Vectors.text("real_apple_jws/go-iap_sandbox_renewalInfo_2000000335310644.jws")
        let sandbox = try Vectors.verifier(.sandbox, bundleID: "co.ringalarm.other", roots: roots)
        #expect(try await sandbox.verifyRenewalInfo(jws).originalTransactionId == "2000000335310644")
        #expect(try await sandbox.verifyAny(jws).kind == .renewalInfo)
        let production = try Vectors.verifier(.production, bundleID: "co.ringalarm.other", roots: roots)
        await expectVerificationError("INVALID_ENVIRONMENT") { _ = try await production.verifyRenewalInfo(jws) }
        await expectVerificationError("INVALID_ENVIRONMENT") { _ = try await production.verifyAny(jws) }
    }

    @Test("5: a real Apple-signed JWS verifies at its signed date, not now; one altered character is refused")
    func realApple() async throws {
        let roots = try AppleRootCertificates.load(
            [try Vectors.der("chain_test_certs/REAL_APPLE_ROOT.der")], requireApple: true)
        let jws = try Vectors.text("real_apple_jws/go-iap_sandbox_renewalInfo_2000000335310644.jws")
        let renewal = try await Vectors.verifier(.sandbox, bundleID: nil, roots: roots).verifyRenewalInfo(jws)
        #expect(
            renewal.originalTransactionId == "2000000335310644"
                && renewal.autoRenewProductId == "co.ringalarm.swtich.quarterly2")
        await expectVerificationError("INVALID_CHAIN") {
            _ = try await Vectors.verifier(
                .sandbox, bundleID: nil, roots: roots, at: .fixed(Date(timeIntervalSince1970: 1_795_000_000))
            )
            .verifyRenewalInfo(jws)
        }
        let parts = jws.split(separator: ".").map(String.init)
        for (segment, index) in [(1, 20), (2, 10)] {
            var altered = parts
            var characters = Array(altered[segment])
            characters[index] = characters[index] == "A" ? "B" : "A"
            altered[segment] = String(characters)
            do {
                _ = try await Vectors.verifier(.sandbox, bundleID: nil, roots: roots).verifyRenewalInfo(
                    altered.joined(separator: "."))
                Issue.record("an altered JWS verified")
            } catch let error as VerificationError {
                // A payload altered into something that is no longer JSON cannot even be read; otherwise the signature fails.
                #expect(["VERIFICATION_FAILURE", "INVALID_JWT_FORMAT"].contains(error.name), "\(error)")
            }
        }
    }
}
