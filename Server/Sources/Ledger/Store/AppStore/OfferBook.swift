import Foundation

/// The subscription offers the server signed and the payments that took them: what an offer's per-user limit and the
/// console's counts read. An offer is named as a payment names it (`promotional:ID`, `win_back:ID`).
public protocol OfferBook: Sendable {
    /// How many of `userID`'s payments took one of `offers`.
    func offerRedemptions(userID: String, offers: [String]) async throws -> Int

    /// Notes on order `orderNo` that `offer` (of catalog product `productID`) was signed for it, and counts the
    /// signature for the offer: only while the order has fewer than `atMost` events from the app (what a client may
    /// grow is bounded). Answers whether it was kept.
    func noteOfferSigned(offer: String, productID: String, orderNo: String, evidence: String, at: Date, atMost: Int)
        async throws -> Bool

    /// Every offer signed or redeemed, with how many times each.
    func offerCounts() async throws -> [OfferCount]
}

/// How often one offer was signed and how many payments took it.
public struct OfferCount: Sendable, Hashable {
    /// As a payment names it: `promotional:ID`, `win_back:ID`, `offer_code:NAME`, `introductory`.
    public var offer: String
    public var signed: Int
    public var redeemed: Int
    public var lastSignedAt: Date?

    public init(offer: String, signed: Int, redeemed: Int, lastSignedAt: Date?) {
        self.offer = offer
        self.signed = signed
        self.redeemed = redeemed
        self.lastSignedAt = lastSignedAt
    }

    /// The names a subscription offer with App Store offer id `id` is counted under: Apple names the offer of a
    /// purchase by the kind it was bought as (`offerType` 2 or 4), so either is the same offer.
    public static func names(ofOffer id: String) -> [String] { ["promotional:\(id)", "win_back:\(id)"] }
}
