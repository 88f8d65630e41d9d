import Foundation

/// A promotional or win-back offer as a purchase passes it to the App Store, in one of StoreKit's two forms.
public enum SignedOffer: Sendable, Hashable {
    /// `Product.PurchaseOption.promotionalOffer(_:compactJWS:)` (the iOS 26 SDK, back-deployed to iOS 15).
    case compactJWS(offerID: String, String)
    /// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` (every SDK; deprecated in
    /// iOS 26): the signature, base64 DER, with its key id, nonce and timestamp in milliseconds.
    case signature(offerID: String, keyID: String, nonce: UUID, signature: String, timestamp: Int64)

    /// The offer's id in App Store Connect.
    public var offerID: String {
        switch self {
        case .compactJWS(let offerID, _), .signature(let offerID, _, _, _, _): offerID
        }
    }
}
