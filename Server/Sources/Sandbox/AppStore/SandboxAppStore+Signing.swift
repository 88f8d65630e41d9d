import AppStore
import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel

/// What the store signs for the merchant and checks of it: promotional offers, renewal information, and the
/// authority (or a faulty leaf) that signs the next payload.
extension SandboxAppStore {
    /// Whether the App Store takes `offer` for a purchase now, as StoreKit checks a promotional offer: signed with the
    /// merchant's In-App Purchase key (its key id) over Apple's string, for this app, within 24 hours of its
    /// timestamp.
    public func acceptsOffer(_ offer: AppStoreOfferSignature) -> Bool {
        guard let token = UUID(uuidString: offer.appAccountToken), let nonce = UUID(uuidString: offer.nonce) else {
            return false
        }
        return acceptsOffer(
            .signature(
                offerID: offer.offerID, keyID: offer.keyID, nonce: nonce, signature: offer.signature,
                timestamp: offer.timestamp),
            productID: offer.productID, appAccountToken: token)
    }

    /// Whether the App Store takes a purchase of `productID` by `appAccountToken` with `offer`, in either form StoreKit
    /// passes one.
    public func acceptsOffer(_ offer: SignedOffer, productID: String, appAccountToken: UUID?) -> Bool {
        switch offer {
        case .compactJWS(let offerID, let jws):
            return acceptsOffer(offerID, productID: productID, compactJWS: jws)
        case .signature(let offerID, let keyID, let nonce, let signature, let timestamp):
            // Apple's string: bundle id, key id, product, offer, application username (the token), nonce, timestamp,
            // each lowercased where Apple says so, joined by U+2063.
            guard let appAccountToken else { return false }
            let payload = [
                bundleID, keyID, productID, offerID, appAccountToken.uuidString.lowercased(),
                nonce.uuidString.lowercased(), String(timestamp),
            ].joined(separator: "\u{2063}")
            guard keyID == merchantKeyID, let der = Data(base64Encoded: signature),
                let signature = try? P256.Signing.ECDSASignature(derRepresentation: der),
                abs(Self.milliseconds(clock.now()) - timestamp) <= 24 * 3600 * 1000
            else { return false }
            return merchantKey.isValidSignature(signature, for: Data(payload.utf8))
        }
    }

    /// Whether the App Store takes promotional offer `offerID` for a purchase of `productID` in the compact-JWS form
    /// StoreKit takes (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`): ES256 over `header.payload` by the
    /// merchant's In-App Purchase key named in `kid`, with `aud` `promotional-offer`, this app's `bid`, the product and
    /// offer asked for, issued within the last 24 hours (Apple: "Generating JWS to sign App Store requests").
    public func acceptsOffer(_ offerID: String, productID: String, compactJWS: String) -> Bool {
        guard let claims = merchantSignedClaims(compactJWS, audience: "promotional-offer") else { return false }
        return claims["productId"] as? String == productID && claims["offerIdentifier"] as? String == offerID
    }

    /// A subscription's renewal information (`JWSRenewalInfoDecodedPayload`), signed: `fields` with Apple's names
    /// (`autoRenewStatus`, `isInBillingRetryPeriod`, `gracePeriodExpiresDate`…) over the chain's defaults, dated now
    /// unless `signedDate` is given.
    public func renewalInfo(originalTransactionID: String, productID: String, _ fields: [String: any Sendable] = [:])
        throws
        -> String
    {
        var payload: [String: Any] = [
            "originalTransactionId": originalTransactionID, "productId": productID, "autoRenewProductId": productID,
            "autoRenewStatus": 1, "signedDate": Self.milliseconds(clock.now()), "environment": "Sandbox",
            "recentSubscriptionStartDate": Self.milliseconds(clock.now()), "appTransactionId": "704330170000000001",
        ]
        for (name, value) in fields { payload[name] = value }
        return try sign(payload)
    }

    func sign(_ payload: [String: Any]) throws -> String { try signedJSON(payload).jws }

    /// `payload` signed, with the JSON text it signed (what the journal keeps of it).
    func signedJSON(_ payload: [String: Any]) throws -> (jws: String, json: String) {
        try nextSigner().signedJSON(payload: payload)
    }

    /// The authority that signs the next signed data: this store's, or a leaf a queued fault asks for.
    func nextSigner() throws -> SandboxAppStoreCA {
        var signer = authority
        let now = clock.now()
        if faults.first == .expiredLeaf {
            faults.removeFirst()
            signer = try authority.withLeaf(validFrom: now - 2 * 365 * 86400, to: now - 365 * 86400)
        } else if faults.first == .revokedLeaf {
            faults.removeFirst()
            signer = try authority.withLeaf(validFrom: now - 86400, to: now + 365 * 86400)
            revokedSerials.insert(try signer.leafSerial)
        }
        return signer
    }
}
