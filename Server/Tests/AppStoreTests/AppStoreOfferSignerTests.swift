import Crypto
import Foundation
import OracleSupport
import Testing

@testable import AppStore

/// Promotional offers and introductory-offer eligibility, signed as StoreKit checks them: the signature over the
/// exact string Apple documents, the JWS with Apple's claims; Apple's own Python library signs the same offer and our
/// payload must be what it signed.
@Suite("App Store offers: signatures StoreKit accepts")
struct AppStoreOfferSignerTests {
    static let key = P256.Signing.PrivateKey()
    static let token = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!
    static let nonce = UUID(uuidString: "BE7E4E4C-6B0E-4A26-86B1-4B1A2E0F7D51")!

    static func signer() async throws -> AppStoreOfferSigner {
        try await AppStoreOfferSigner(
            signingKey: key.pemRepresentation, keyID: "KEY123", issuerID: "issuer-1", bundleID: "com.example.app")
    }

    /// The claims of a compact JWS, and whether its ES256 signature verifies with `key`.
    static func open(_ jws: String, with key: P256.Signing.PublicKey) throws -> (
        header: [String: Any], claims: [String: Any], valid: Bool
    ) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        func decode(_ part: String) throws -> Data {
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return try #require(Data(base64Encoded: text))
        }
        let header = try #require(try JSONSerialization.jsonObject(with: decode(parts[0])) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: decode(parts[1])) as? [String: Any])
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: decode(parts[2]))
        return (header, claims, key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test("the signature covers Apple's string (U+2063 between the parts, lowercased token and nonce) and verifies")
    func promotionalOfferSignature() async throws {
        let signer = try await Self.signer()
        let payload = signer.promotionalOfferPayload(
            productID: "vip.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_790_000_000_123)
        #expect(
            payload
                == "com.example.app\u{2063}KEY123\u{2063}vip.monthly\u{2063}WINBACK\u{2063}"
                + "7e3fb20b-4cdb-47cc-936d-99d65f608138\u{2063}be7e4e4c-6b0e-4a26-86b1-4b1a2e0f7d51\u{2063}1790000000123"
        )
        let offer = try await signer.promotionalOffer(
            productID: "vip.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_790_000_000_123, transactionID: nil)
        let der = try #require(Data(base64Encoded: offer.signature))
        let signature = try P256.Signing.ECDSASignature(derRepresentation: der)
        #expect(Self.key.publicKey.isValidSignature(signature, for: Data(payload.utf8)))
        #expect(offer.keyID == "KEY123" && offer.nonce == Self.nonce.uuidString.lowercased())
        #expect(offer.appAccountToken == Self.token.uuidString.lowercased() && offer.timestamp == 1_790_000_000_123)

        let (header, claims, valid) = try Self.open(offer.compactJWS, with: Self.key.publicKey)
        #expect(valid)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "KEY123")
        #expect(claims["aud"] as? String == "promotional-offer" && claims["bid"] as? String == "com.example.app")
        #expect(claims["productId"] as? String == "vip.monthly" && claims["offerIdentifier"] as? String == "WINBACK")
        #expect(claims["iss"] as? String == "issuer-1" && claims["iat"] as? Int == 1_790_000_000)
        #expect(claims["transactionId"] == nil)
    }

    @Test("introductory-offer eligibility: Apple's claims, verified")
    func eligibility() async throws {
        let jws = try await Self.signer().introductoryOfferEligibility(
            productID: "vip.monthly", allow: false, transactionID: "2000000000000001", nonce: Self.nonce,
            at: Date(timeIntervalSince1970: 1_790_000_000))
        let (_, claims, valid) = try Self.open(jws, with: Self.key.publicKey)
        #expect(valid)
        #expect(claims["aud"] as? String == "introductory-offer-eligibility")
        #expect(
            claims["allowIntroductoryOffer"] as? Bool == false
                && claims["transactionId"] as? String == "2000000000000001")
    }

    @Test("a key that is not P-256 PEM is refused at start")
    func badKey() async {
        await #expect(throws: AppStoreOfferError.self) {
            try await AppStoreOfferSigner(signingKey: "not a key", keyID: "K", issuerID: "I", bundleID: "B")
        }
    }

    @Test(
        "Apple's library signs our payload: its signature verifies over the string we sign; its JWS has our claims",
        .enabled(if: AppStoreOracle.apple.isAvailable))
    func appleLibraryAgrees() async throws {
        let signer = try await Self.signer()
        let common: [String: Any] = [
            "key": Self.key.pemRepresentation, "key_id": "KEY123", "bundle_id": "com.example.app",
            "product_id": "vip.monthly", "offer_id": "WINBACK",
        ]
        var v1 = common
        v1["op"] = "promotional_offer"
        v1["application_username"] = Self.token.uuidString
        v1["nonce"] = Self.nonce.uuidString
        v1["timestamp"] = 1_790_000_000_123
        var v2 = common
        v2["op"] = "promotional_offer_v2"
        v2["issuer_id"] = "issuer-1"
        let answers = try await AppStoreOracle.apple.run([v1, v2])
        let theirText = try #require(answers.first as? String)
        let theirs = try #require(Data(base64Encoded: theirText))
        let payload = signer.promotionalOfferPayload(
            productID: "vip.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_790_000_000_123)
        #expect(
            Self.key.publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(derRepresentation: theirs), for: Data(payload.utf8)),
            "Apple's library signed another string than ours")
        let theirJWS = try #require(answers.last as? String)
        let (theirHeader, theirClaims, valid) = try Self.open(theirJWS, with: Self.key.publicKey)
        #expect(valid)
        let ours = try await signer.promotionalOffer(
            productID: "vip.monthly", offerID: "WINBACK", appAccountToken: Self.token, nonce: Self.nonce,
            timestamp: 1_790_000_000_123, transactionID: nil)
        let (ourHeader, ourClaims, _) = try Self.open(ours.compactJWS, with: Self.key.publicKey)
        #expect(
            Set(theirClaims.keys) == Set(ourClaims.keys), "claims: theirs \(theirClaims.keys), ours \(ourClaims.keys)")
        for name in ["aud", "bid", "iss", "productId", "offerIdentifier"] {
            #expect(theirClaims[name] as? String == ourClaims[name] as? String, "\(name)")
        }
        #expect(theirHeader["alg"] as? String == ourHeader["alg"] as? String)
        #expect(theirHeader["kid"] as? String == ourHeader["kid"] as? String)
    }
}
