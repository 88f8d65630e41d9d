import Crypto
import Foundation
import JWTKit
import OrderSafeModel

/// Signs what StoreKit takes to apply a subscription offer the App Store cannot grant on its own, with the In-App
/// Purchase key from App Store Connect:
/// - a promotional offer's signature, `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:
///   timestamp:)`: ECDSA P-256 SHA-256 over `bundleID ⁣ keyID ⁣ productID ⁣ offerID ⁣ appAccountToken ⁣ nonce ⁣
///   timestamp` joined by U+2063, lowercased token and nonce, DER, base64 (Apple: "Generating a signature for
///   promotional offers"; its app-store-server-library's `PromotionalOfferSignatureCreator`);
/// - the same offer as a compact JWS, `promotionalOffer(_:compactJWS:)` (iOS 18.4): ES256 with `kid`, claims
///   `productId`, `offerIdentifier`, `transactionId` when known, `bid`, `iss`, `aud: promotional-offer`, `iat`,
///   `nonce` (Apple: "Generating JWS to sign App Store requests"; the library's `PromotionalOfferV2SignatureCreator`);
/// - introductory-offer eligibility, `introductoryOfferEligibility(compactJWS:)`: claims `productId`,
///   `allowIntroductoryOffer`, `transactionId`, `aud: introductory-offer-eligibility`.
public struct AppStoreOfferSigner: Sendable {
    let key: P256.Signing.PrivateKey
    let keys: JWTKeyCollection
    let keyID: String
    let issuerID: String
    let bundleID: String

    /// - Parameter signingKey: the In-App Purchase key (`.p8`, PEM PKCS#8), as the App Store Server API takes it.
    public init(signingKey: String, keyID: String, issuerID: String, bundleID: String) async throws(AppStoreOfferError)
    {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: signingKey)
            keys = await JWTKeyCollection().add(
                ecdsa: try ES256PrivateKey(pem: signingKey), kid: JWKIdentifier(string: keyID))
        } catch {
            throw .unavailable("the In-App Purchase key is not a PEM P-256 private key (\(error))")
        }
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// The string the promotional offer's signature covers (a signature of the App Store's own is checked
    /// against it on the device).
    public func promotionalOfferPayload(
        productID: String, offerID: String, appAccountToken: UUID, nonce: UUID, timestamp: Int64
    ) -> String {
        [
            bundleID, keyID, productID, offerID, appAccountToken.uuidString.lowercased(), nonce.uuidString.lowercased(),
            String(timestamp),
        ].joined(separator: "\u{2063}")
    }

    /// The promotional offer for one purchase of `productID` bound to the order `appAccountToken` names, in both
    /// of StoreKit's forms.
    public func promotionalOffer(
        productID: String, offerID: String, appAccountToken: UUID, nonce: UUID, timestamp: Int64,
        transactionID: String?
    ) async throws(AppStoreOfferError) -> AppStoreOfferSignature {
        let payload = promotionalOfferPayload(
            productID: productID, offerID: offerID, appAccountToken: appAccountToken, nonce: nonce,
            timestamp: timestamp)
        let signature: Data
        do {
            signature = try key.signature(for: Data(payload.utf8)).derRepresentation
        } catch {
            throw .unavailable("the promotional offer could not be signed (\(error))")
        }
        let claims = RequestClaims(
            productId: productID, offerIdentifier: offerID, transactionId: transactionID, bid: bundleID,
            iss: issuerID, aud: "promotional-offer", iat: timestamp / 1000, nonce: nonce.uuidString.lowercased())
        return AppStoreOfferSignature(
            offerID: offerID, productID: productID, keyID: keyID, nonce: nonce, timestamp: timestamp,
            signature: signature.base64EncodedString(), compactJWS: try await sign(claims),
            appAccountToken: appAccountToken)
    }

    /// Whether the customer may take `productID`'s introductory offer, as StoreKit takes it from the server.
    public func introductoryOfferEligibility(
        productID: String, allow: Bool, transactionID: String, nonce: UUID, at date: Date
    ) async throws(AppStoreOfferError) -> String {
        try await sign(
            RequestClaims(
                productId: productID, allowIntroductoryOffer: allow, transactionId: transactionID, bid: bundleID,
                iss: issuerID, aud: "introductory-offer-eligibility", iat: Int64(date.timeIntervalSince1970),
                nonce: nonce.uuidString.lowercased()))
    }

    private func sign(_ claims: some JWTPayload) async throws(AppStoreOfferError) -> String {
        var header = JWTHeader()
        header.typ = "JWT"
        do {
            return try await keys.sign(claims, kid: JWKIdentifier(string: keyID), header: header)
        } catch {
            throw .unavailable("the offer's JWS could not be signed (\(error))")
        }
    }

    /// Apple's claims of a signed App Store request, `aud` naming which: the feature's own are set, the others nil
    /// (and left out of the JWS).
    struct RequestClaims: JWTPayload {
        var productId: String
        var offerIdentifier: String?
        var allowIntroductoryOffer: Bool?
        var transactionId: String?
        var bid: String
        var iss: String
        var aud: String
        var iat: Int64
        var nonce: String
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}

/// Why an offer was not signed.
public enum AppStoreOfferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No In-App Purchase key, or it cannot sign.
    case unavailable(String)

    public var description: String {
        switch self {
        case .unavailable(let reason): reason
        }
    }
}
