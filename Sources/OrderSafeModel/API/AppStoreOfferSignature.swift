import Foundation

/// Body of `POST /v1/appstore/offers/{offer_id}/signature`: a promotional offer signed for one purchase, bound to its
/// order (`app_account_token`, which the purchase must carry), in both forms StoreKit takes: the signature with its
/// key id, nonce and timestamp, and the compact JWS (iOS 18.4 and later).
public struct AppStoreOfferSignature: Codable, Hashable, Sendable {
    public var offerID: String
    /// The App Store product id.
    public var productID: String
    public var keyID: String
    /// Lowercased, as it was signed.
    public var nonce: String
    /// Milliseconds since 1970; the App Store honours the signature for 24 hours.
    public var timestamp: Int64
    /// Base64 DER ECDSA signature.
    public var signature: String
    public var compactJWS: String
    /// The order's UUID, lowercased: the purchase's `appAccountToken`.
    public var appAccountToken: String

    public init(
        offerID: String, productID: String, keyID: String, nonce: UUID, timestamp: Int64, signature: String,
        compactJWS: String, appAccountToken: UUID
    ) {
        self.offerID = offerID
        self.productID = productID
        self.keyID = keyID
        self.nonce = nonce.uuidString.lowercased()
        self.timestamp = timestamp
        self.signature = signature
        self.compactJWS = compactJWS
        self.appAccountToken = appAccountToken.uuidString.lowercased()
    }

    enum CodingKeys: String, CodingKey {
        case nonce, timestamp, signature
        case offerID = "offer_id"
        case productID = "product_id"
        case keyID = "key_id"
        case compactJWS = "compact_jws"
        case appAccountToken = "app_account_token"
    }
}
