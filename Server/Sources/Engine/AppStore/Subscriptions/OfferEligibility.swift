import Foundation
import Ledger
import OrderSafeModel

/// Which of the catalog's promotional and win-back offers a user may have now: what the server lists on the paywall
/// (`GET /v1/catalog` with the user's token) and what it checks before it signs one, one rule for both.
struct OfferEligibility: Sendable {
    let subscriptions: any SubscriptionBook
    let redemptions: any OfferBook
    let catalog: Catalog
    let now: Date

    /// An offer the catalog lists, where the user stands to it: their audience in the product's group and the
    /// subscription that puts them there.
    struct Standing: Sendable {
        var kind: SubscriptionOfferKind
        var rule: OfferRule
        var price: Money?
        var audience: OfferAudience
        var status: UserSubscription?
    }

    /// Offer `offerID` of `product` as `userID` stands to it, given the user's subscriptions `held`: throws the
    /// reason when the catalog lists no such offer, its audience does not admit the user, the window after expiry
    /// passed or the user took it as often as it allows. The merchant's word (`ask_merchant`) is not asked here.
    func standing(
        of offerID: String, product: CatalogProduct, userID: String, held: [UserSubscription]
    ) async throws -> Standing {
        // Only an offer the catalog lists for the product, and only for whom it is: a promotional offer for the
        // audiences its rule names, a win-back offer for a subscriber whose subscription expired; then what the rule
        // asks besides (a window after expiry, a limit per user).
        let listed: (kind: SubscriptionOfferKind, audiences: [OfferAudience], rule: OfferRule, price: Money?)
        if let promotional = product.promotionalOffers.first(where: { $0.id == offerID }) {
            listed = (.promotional, promotional.eligible, promotional.rule, promotional.price)
        } else if let winBack = product.winBackOffers.first(where: { $0.id == offerID }) {
            listed = (.winBack, [.expired], winBack.rule, winBack.price)
        } else {
            throw OfferRequestError.notListed(offerID, product: product.id)
        }
        let group = product.subscriptionGroup ?? held.first { $0.productID == product.appStoreProductID }?.groupID
        let status = group.flatMap { group in held.first { $0.groupID == group } }
        let audience = OfferAudience(status?.state)
        guard listed.audiences.contains(audience) else {
            throw OfferRequestError.notEligible(offerID, audience: audience)
        }
        if audience == .expired, let days = listed.rule.withinDays,
            !OfferWindow(days: days).admits(expiredAt: status?.expiresAt, now: now)
        {
            throw OfferRequestError.outsideWindow(offerID, days: days)
        }
        if let limit = listed.rule.perUser {
            let taken = try await redemptions.offerRedemptions(
                userID: userID, offers: OfferCount.names(ofOffer: offerID))
            guard taken < limit else { throw OfferRequestError.limitReached(offerID, limit: limit) }
        }
        return Standing(kind: listed.kind, rule: listed.rule, price: listed.price, audience: audience, status: status)
    }

    /// The user's subscriptions as the ledger folds them now.
    func held(by userID: String) async throws -> [UserSubscription] {
        SubscriptionFold.statuses(try await subscriptions.subscriptionSignals(userID: userID), at: now)
    }

    /// Every promotional and win-back offer of the catalog's App Store subscriptions that `userID` may have now, by
    /// product id, then promotional before win-back, in the catalog's order.
    func available(to userID: String) async throws -> [AvailableOffer] {
        let held = try await held(by: userID)
        var offers: [AvailableOffer] = []
        let products = catalog.products.filter { $0.kind == .autoRenewableSubscription && $0.appStoreProductID != nil }
        for product in products.sorted(by: { $0.id < $1.id }) {
            for offerID in product.promotionalOffers.map(\.id) + product.winBackOffers.map(\.id) {
                do {
                    let standing = try await standing(of: offerID, product: product, userID: userID, held: held)
                    offers.append(
                        AvailableOffer(
                            productID: product.id, offerID: offerID, kind: standing.kind, price: standing.price,
                            asksMerchant: standing.rule.askMerchant))
                } catch is OfferRequestError {
                    continue
                }
            }
        }
        return offers
    }
}
