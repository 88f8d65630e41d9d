/// Whether the signed-in user may take an auto-renewable product's introductory offer, as `GET /v1/catalog` answers
/// when it is asked with the user's token: not once the user has subscribed in the product's group (Apple's rule),
/// whichever Apple ID the phone uses now.
public struct IntroductoryOfferEligibility: Codable, Hashable, Sendable {
    /// The catalog product's id.
    public var productID: String
    public var eligible: Bool
    /// The same answer signed with the In-App Purchase key for StoreKit's
    /// `Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)` (iOS 18.4); nil when the server has no key
    /// or the user no App Store transaction to name in it.
    public var signedEligibility: String?

    public init(productID: String, eligible: Bool, signedEligibility: String? = nil) {
        self.productID = productID
        self.eligible = eligible
        self.signedEligibility = signedEligibility
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case eligible
        case signedEligibility = "signed_eligibility"
    }
}
