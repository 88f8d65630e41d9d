import Foundation
import OrderSafeModel

extension OrderSafe {
    /// Buys auto-renewable subscription `productID` (a catalog id) with subscription offer `offerID` (a promotional or
    /// win-back offer's id in App Store Connect, such as one of `UserSubscription.winBackOffers`): the server signs
    /// the offer for this purchase's order, and StoreKit checks the signature. Outcomes as
    /// ``purchase(_:through:confirmIn:)``; an offer the server will not sign (not a subscription, no In-App Purchase
    /// key) fails before anything is charged.
    public func purchase(_ productID: String, offer offerID: String, confirmIn scene: ConfirmationScene? = nil)
        async -> PurchaseOutcome
    {
        await buy(productID, through: .appStore, offer: offerID, confirmIn: scene)
    }

    /// The signed-in user's eligibility for each auto-renewable product's introductory offer, as the server knows it
    /// across every Apple ID the user bought with (StoreKit's own answer covers the phone's Apple ID only).
    public func introductoryOfferEligibility() async throws(OrderSafeError) -> [IntroductoryOfferEligibility] {
        guard userID != nil else { throw .server(.signedOut) }
        do {
            return try await api.catalogForUser().introductoryOffers ?? []
        } catch let problem as ServerProblem {
            throw .server(problem)
        } catch {
            throw .server(.malformedAnswer("\(error)"))
        }
    }

    /// What the server signs for the purchase of `product` for `order`: the offer when one is asked for; for a
    /// subscription, the user's ineligibility for its introductory offer when the server says so (never an
    /// eligibility StoreKit would not grant on its own). The eligibility is best effort: without an answer StoreKit
    /// decides alone.
    func signedOptions(for product: CatalogProduct, order: Order, offer offerID: String?)
        async throws(ServerProblem) -> SignedPurchaseOptions
    {
        var signed = SignedPurchaseOptions()
        if let offerID {
            do {
                let offer = try await api.signOffer(offerID, orderNo: order.orderNo)
                guard let nonce = UUID(uuidString: offer.nonce), let signature = Data(base64Encoded: offer.signature),
                    let timestamp = Int(exactly: offer.timestamp)
                else { throw ServerProblem.malformedAnswer("the offer's signature, nonce or timestamp is malformed") }
                signed.promotionalOffer = .init(
                    offerID: offer.offerID, compactJWS: offer.compactJWS, keyID: offer.keyID, nonce: nonce,
                    signature: signature, timestamp: timestamp)
            } catch let problem as ServerProblem {
                throw problem
            } catch {
                throw .malformedAnswer("\(error)")
            }
        }
        if product.kind == .autoRenewableSubscription,
            let eligibility = try? await api.catalogForUser().introductoryOffers?.first(where: {
                $0.productID == product.id
            }),
            !eligibility.eligible
        {
            signed.introductoryOfferEligibility = eligibility.signedEligibility
        }
        return signed
    }
}
