import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel

extension SandboxAppStore {
    /// The merchant server's word on a customer's introductory-offer eligibility, as StoreKit takes it
    /// (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`, iOS 18.4): ES256 over `header.payload` by
    /// the merchant's In-App Purchase key named in `kid`, `aud` `introductory-offer-eligibility`, this app's `bid`,
    /// the product bought, issued within the last 24 hours (Apple: "Generating JWS to sign App Store requests"). Its
    /// `allowIntroductoryOffer`, or nil when the JWS is not one the App Store would take (StoreKit then decides by the
    /// Apple ID's own history).
    public func introductoryEligibility(productID: String, compactJWS: String) -> Bool? {
        guard let claims = merchantSignedClaims(compactJWS, audience: "introductory-offer-eligibility"),
            claims["productId"] as? String == productID
        else { return nil }
        return claims["allowIntroductoryOffer"] as? Bool
    }

    /// The claims of a compact JWS the merchant's server signed for StoreKit to pass on: ES256 over `header.payload`
    /// by the merchant's In-App Purchase key named in `kid`, for `audience` and this app's `bid`, issued within the
    /// last 24 hours (Apple: "Generating JWS to sign App Store requests"); nil for anything else.
    func merchantSignedClaims(_ compactJWS: String, audience: String) -> [String: Any]? {
        let parts = compactJWS.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard compactJWS.utf8.count <= 8192, parts.count == 3,
            let headerBytes = Base64URL.decode(ArraySlice(parts[0])),
            let payloadBytes = Base64URL.decode(ArraySlice(parts[1])),
            let signatureBytes = Base64URL.decode(ArraySlice(parts[2])),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == merchantKeyID,
            claims["aud"] as? String == audience, claims["bid"] as? String == bundleID,
            let issued = Self.milliseconds(claims["iat"]),
            abs(Self.milliseconds(clock.now()) / 1000 - issued) <= 24 * 3600,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        let signingInput = Data(compactJWS.utf8.prefix(parts[0].count + 1 + parts[1].count))
        return merchantKey.isValidSignature(signature, for: signingInput) ? claims : nil
    }
}

extension OfferPaymentMode {
    /// Apple's `offerDiscountType` for a transaction bought with it.
    var discountType: String {
        switch self {
        case .freeTrial: "FREE_TRIAL"
        case .payAsYouGo: "PAY_AS_YOU_GO"
        case .payUpFront: "PAY_UP_FRONT"
        }
    }
}
