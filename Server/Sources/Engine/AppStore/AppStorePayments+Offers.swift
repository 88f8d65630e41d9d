import AppStore
import Foundation
import Ledger
import OrderSafeModel

extension AppStorePayments {
    /// Signs promotional offer `offerID` for the purchase of order `orderNo`: the user's own unpaid App Store order
    /// of an auto-renewable subscription. The signature is bound to the order (its UUID is the `appAccountToken`
    /// signed, which the purchase must carry, so the transaction lands on this order and this user) and noted on its
    /// timeline with its nonce, within what a client may add to an order's timeline (``OrderService/appEventsKept``
    /// events, its hints and offers together). Apple checks the offer id, the product and the signature when the
    /// purchase is made.
    public func signOffer(_ offerID: String, orderNo: String, userID: String, nonce: UUID = UUID())
        async throws(OfferRequestError) -> AppStoreOfferSignature
    {
        guard let offers else {
            throw .unavailable("no In-App Purchase key is configured (appstore.api): offers cannot be signed")
        }
        guard Catalog.isOfferID(offerID) else { throw .invalidOfferID }
        do {
            guard let order = try await context.ledger.order(number: orderNo), order.userID == userID else {
                throw OfferRequestError.orderNotFound
            }
            guard order.channel == .appStore, order.status == .created || order.status == .paying else {
                throw OfferRequestError.notApplicable("order \(orderNo) is not an unpaid App Store order")
            }
            guard let product = context.catalog.catalog.product(id: order.productID),
                product.kind == .autoRenewableSubscription, let appStoreProductID = product.appStoreProductID
            else {
                throw OfferRequestError.notApplicable("\(order.productID) is not an auto-renewable subscription")
            }
            // Only an offer the catalog lists for the product, and only for whom it is: a promotional offer for the
            // audiences its rule names, a win-back offer for a subscriber whose subscription expired.
            let audiences: [OfferAudience]
            if let promotional = product.promotionalOffers.first(where: { $0.id == offerID }) {
                audiences = promotional.eligible
            } else if product.winBackOffers.contains(offerID) {
                audiences = [.expired]
            } else {
                throw OfferRequestError.notListed(offerID, product: product.id)
            }
            let now = context.clock.now()
            let held = SubscriptionFold.statuses(try await context.ledger.subscriptionSignals(userID: userID), at: now)
            let group = product.subscriptionGroup ?? held.first { $0.productID == appStoreProductID }?.groupID
            let status = group.flatMap { group in held.first { $0.groupID == group } }
            let audience = OfferAudience(status?.state)
            guard audiences.contains(audience) else {
                throw OfferRequestError.notEligible(offerID, audience: audience)
            }
            let signed = try await offers.promotionalOffer(
                productID: appStoreProductID, offerID: offerID, appAccountToken: order.orderUUID, nonce: nonce,
                timestamp: now.millisecondsSince1970, transactionID: status?.lastTransactionID)
            guard
                try await context.ledger.note(
                    orderNo: orderNo, kind: .offerSigned, cause: .app,
                    evidence: "offer:\(offerID) nonce:\(signed.nonce) for:\(audience.rawValue)", at: now,
                    atMost: OrderService.appEventsKept)
            else { throw OfferRequestError.tooMany }
            return signed
        } catch let error as OfferRequestError {
            throw error
        } catch let error as AppStoreOfferError {
            throw .unavailable(error.description)
        } catch {
            throw .unavailable("the order could not be read (\(error))")
        }
    }
}

extension AppStorePayments {
    /// The introductory-offer eligibility StoreKit takes from the server (iOS 18.4), for App Store product
    /// `productID`, naming the user's `transactionID`; nil without an In-App Purchase key (or if it cannot sign: the
    /// app then lets StoreKit decide).
    public func signedEligibility(productID: String, eligible: Bool, transactionID: String) async -> String? {
        guard let offers else { return nil }
        return try? await offers.introductoryOfferEligibility(
            productID: productID, allow: eligible, transactionID: transactionID, nonce: UUID(),
            at: context.clock.now())
    }
}

/// Why an offer was not signed for an order.
public enum OfferRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    case unavailable(String)
    case invalidOfferID
    case orderNotFound
    case notApplicable(String)
    /// The catalog lists no such offer for the order's product.
    case notListed(String, product: String)
    /// The offer's rule does not admit the user.
    case notEligible(String, audience: OfferAudience)
    case tooMany

    public var description: String {
        switch self {
        case .unavailable(let reason): reason
        case .invalidOfferID: "an offer id is 1 to 64 ASCII letters, digits, '.', '-' or '_'"
        case .orderNotFound: "no such order of yours"
        case .notApplicable(let reason): reason
        case .notListed(let offer, let product):
            "the catalog lists no offer '\(offer)' for \(product) (promotional_offers, win_back_offers)"
        case .notEligible(let offer, let audience):
            "offer '\(offer)' is not for a user whose subscription is \(audience.rawValue)"
        case .tooMany: "this order holds as many events from the app as it may: create a new order for the offer"
        }
    }
}
