import ChannelSupport
import Crypto
import Foundation
import Testing

@testable import AppStore

/// EXPECTED-apple-library.md §3: Apple's model payloads, wrapped in a JWS signed by a random key without x5c and
/// verified as LocalTesting data (decoding, bundle and environment checks only, as Apple's tests do).
@Suite("App Store payload models", .enabled(if: Vectors.available))
struct AppStoreModelTests {
    static func jws(_ model: String) throws -> String {
        let payload = try Data(contentsOf: Vectors.directory.appendingPathComponent("models/\(model).json"))
        let input = Base64URL.encode(Data(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(payload)
        return input + "."
            + Base64URL.encode(try P256.Signing.PrivateKey().signature(for: Data(input.utf8)).rawRepresentation)
    }

    static let verifier = try! Vectors.verifier(.localTesting, appAppleID: nil)

    static func envelope(_ model: String) async throws -> AppStoreNotification {
        try AppStoreNotification(try await verifier.verified(try jws(model), dateField: "signedDate"))
    }

    @Test("notifications: types, subtypes, data, summary, external purchase tokens, app data")
    func notifications() async throws {
        // Their nested signedTransactionInfo is a placeholder, not a JWS: the whole notification is refused for it…
        await #expect(throws: VerificationError.self) {
            _ = try await Self.verifier.verifyNotification(try Self.jws("signedNotification"))
        }
        // …and the envelope itself decodes.
        let subscribed = try await Self.envelope("signedNotification")
        #expect(subscribed.type == .subscribed && subscribed.typedSubtype == .initialBuy && subscribed.version == "2.0")
        #expect(
            subscribed.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20"
                && subscribed.signedDate == 1_698_148_900_000)
        #expect(
            subscribed.data?.appAppleId == 41234 && subscribed.data?.bundleVersion == "1.2.3"
                && subscribed.data?.status == 1)
        let consumption = try await Self.envelope("signedConsumptionRequestNotification")
        #expect(
            consumption.type == .consumptionRequest
                && consumption.data?.consumptionRequestReason == "UNINTENDED_PURCHASE")
        let summary = try await Self.verifier.verifyNotification(try Self.jws("signedSummaryNotification"))
        #expect(summary.type == .renewalExtension && summary.typedSubtype == .summary && summary.data == nil)
        #expect(
            summary.summary?.storefrontCountryCodes == ["CAN", "USA", "MEX"] && summary.summary?.succeededCount == 5)
        let rescind = try await Self.verifier.verifyNotification(try Self.jws("signedRescindConsentNotification"))
        #expect(
            rescind.type == .rescindConsent
                && rescind.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")

        let external = SignedDataVerifier(
            rootCertificates: [], bundleID: "com.example", appAppleID: 55555, environment: .production)
        await #expect(throws: VerificationError.self) {
            // Production data must carry a verifiable chain; the model's token is only decodable locally.
            _ = try await external.verifyNotification(try Self.jws("signedExternalPurchaseTokenNotification"))
        }
    }

    @Test("transactions, renewal info and app transactions with every field")
    func payloads() async throws {
        let transaction = try await Self.verifier.verifyTransaction(try Self.jws("signedTransaction"))
        #expect(
            transaction.originalTransactionId == "12345" && transaction.transactionId == "23456"
                && transaction.webOrderLineItemId == "34343")
        #expect(transaction.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(
            transaction.revocationDate == 1_698_148_950_000 && transaction.revocationReason == 1
                && transaction.isUpgraded == true)
        #expect(
            transaction.price == 10990 && transaction.currency == "USD"
                && transaction.offerDiscountType == "PAY_AS_YOU_GO")
        #expect(
            transaction.appTransactionId == "71134" && transaction.offerPeriod == "P1Y"
                && transaction.storefrontId == "143441")
        let revoked = try await Self.verifier.verifyTransaction(try Self.jws("signedTransactionWithRevocation"))
        #expect(revoked.revocationType == "REFUND_PRORATED" && revoked.revocationPercentage == 50000)
        let renewal = try await Self.verifier.verifyRenewalInfo(try Self.jws("signedRenewalInfo"))
        #expect(
            renewal.expirationIntent == 1 && renewal.isInBillingRetryPeriod == true && renewal.priceIncreaseStatus == 0)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"] && renewal.renewalPrice == 9990)
        let app = try await Self.verifier.verifyAppTransaction(try Self.jws("appTransaction"))
        #expect(
            app.appAppleId == 531412 && app.versionExternalIdentifier == 512 && app.preorderDate == 1_698_148_700_000)
        #expect(app.originalPlatform == "iOS" && app.deviceVerificationNonce == "48ccfa42-7431-4f22-9908-7e88983e105a")
    }
}
