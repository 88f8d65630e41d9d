import AppStore
import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

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
            let now = context.clock.now()
            let eligibility = OfferEligibility(
                subscriptions: context.ledger, redemptions: context.ledger, catalog: context.catalog.catalog, now: now)
            let listed = try await eligibility.standing(
                of: offerID, product: product, userID: userID, held: try await eligibility.held(by: userID))
            let audience = listed.audience
            if listed.rule.askMerchant {
                guard let offerHook else {
                    throw OfferRequestError.unavailable(
                        "offer '\(offerID)' asks the merchant (ask_merchant) and no offer_hook.url is configured")
                }
                let answer = await offerHook.ask(
                    .init(
                        userID: userID, orderNo: orderNo, productID: product.id, appStoreProductID: appStoreProductID,
                        offerID: offerID, offerKind: listed.kind.rawValue, audience: audience))
                switch answer {
                case .yes: break
                case .no: throw OfferRequestError.merchantDeclined(offerID)
                case .silent(let why):
                    context.logger.warning(
                        "offer hook gave no answer: no offer signed",
                        metadata: ["offer": "\(offerID)", "why": "\(why)"])
                    throw OfferRequestError.merchantSilent(offerID)
                }
            }
            let signed = try await offers.promotionalOffer(
                productID: appStoreProductID, offerID: offerID, appAccountToken: order.orderUUID, nonce: nonce,
                timestamp: now.millisecondsSince1970, transactionID: listed.status?.lastTransactionID)
            let rule = listed.rule.summary.isEmpty ? "" : " rule:\(listed.rule.summary)"
            guard
                try await context.ledger.noteOfferSigned(
                    offer: "\(listed.kind.rawValue):\(offerID)", productID: product.id, orderNo: orderNo,
                    evidence: "offer:\(offerID) nonce:\(signed.nonce) for:\(audience.rawValue)\(rule)", at: now,
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
    /// The promotional and win-back offers `userID` may have now (the rule ``signOffer(_:orderNo:userID:nonce:)``
    /// checks, but the merchant's word); none without an In-App Purchase key, which no offer can be signed without.
    public func availableOffers(userID: String) async throws -> [AvailableOffer] {
        guard offers != nil else { return [] }
        return try await OfferEligibility(
            subscriptions: context.ledger, redemptions: context.ledger, catalog: context.catalog.catalog,
            now: context.clock.now()
        ).available(to: userID)
    }

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
    /// The subscription expired longer ago than the offer's window.
    case outsideWindow(String, days: Int)
    /// The user took the offer as many times as its rule allows.
    case limitReached(String, limit: Int)
    /// The merchant's backend said no.
    case merchantDeclined(String)
    /// The merchant's backend gave no answer in time (no answer is no offer).
    case merchantSilent(String)
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
        case .outsideWindow(let offer, let days):
            "offer '\(offer)' is for a subscription that expired within the last \(days) days"
        case .limitReached(let offer, let limit):
            "offer '\(offer)' may be taken \(limit) time\(limit == 1 ? "" : "s") per user, and you have"
        case .merchantDeclined(let offer): "the merchant does not offer '\(offer)' to you"
        case .merchantSilent(let offer): "offer '\(offer)' is not available now (the merchant did not answer)"
        case .tooMany: "this order holds as many events from the app as it may: create a new order for the offer"
        }
    }
}

/// How long after a subscription expired an offer with `within_days` may still be had.
struct OfferWindow {
    let days: Int

    /// Whether a subscription that expired at `expiredAt` is still in the window at `now` (an unknown end is not).
    func admits(expiredAt: Date?, now: Date) -> Bool {
        guard let expiredAt else { return false }
        return now.timeIntervalSince(expiredAt) <= TimeInterval(days) * 86400
    }
}
