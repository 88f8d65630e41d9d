import Foundation
import OrderSafeModel

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

extension StoreKitClient {
    /// StoreKit's `Product` as a paywall reads it.
    static func product(_ product: Product) -> StoreProduct {
        StoreProduct(
            id: product.id, displayName: product.displayName, description: product.description, price: product.price,
            displayPrice: product.displayPrice, currencyCode: product.priceFormatStyle.currencyCode,
            isFamilyShareable: product.isFamilyShareable, subscription: product.subscription.map(subscription))
    }

    static func subscription(_ info: Product.SubscriptionInfo) -> StoreSubscription {
        var winBack: [StoreSubscriptionOffer] = []
        if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            winBack = info.winBackOffers.map { offer($0, .winBack) }
        }
        return StoreSubscription(
            groupID: info.subscriptionGroupID, period: period(info.subscriptionPeriod),
            introductoryOffer: info.introductoryOffer.map { offer($0, .introductory) },
            promotionalOffers: info.promotionalOffers.map { offer($0, .promotional) }, winBackOffers: winBack)
    }

    static func offer(_ offer: Product.SubscriptionOffer, _ kind: StoreSubscriptionOffer.Kind)
        -> StoreSubscriptionOffer
    {
        let mode: OfferPaymentMode =
            switch offer.paymentMode {
            case .freeTrial: .freeTrial
            case .payUpFront: .payUpFront
            default: .payAsYouGo
            }
        return StoreSubscriptionOffer(
            id: offer.id, kind: kind, paymentMode: mode, period: period(offer.period), periodCount: offer.periodCount,
            price: offer.price, displayPrice: offer.displayPrice)
    }

    static func period(_ period: Product.SubscriptionPeriod) -> GrantPeriod {
        let unit: GrantPeriod.Unit =
            switch period.unit {
            case .day: .day
            case .week: .week
            case .month: .month
            case .year: .year
            @unknown default: .day
            }
        return GrantPeriod(count: period.value, unit: unit)
    }

    public func subscriptionStatuses(groupID: String) async throws -> [StoreSubscriptionStatus] {
        do {
            return try await Product.SubscriptionInfo.status(for: groupID).map { status in
                let transaction = status.transaction.unsafePayloadValue
                let renewal = status.renewalInfo.unsafePayloadValue
                var verified = true
                if case .unverified = status.transaction { verified = false }
                if case .unverified = status.renewalInfo { verified = false }
                let state: StoreSubscriptionStatus.State =
                    switch status.state {
                    case .subscribed: .subscribed
                    case .expired: .expired
                    case .inBillingRetryPeriod: .inBillingRetryPeriod
                    case .inGracePeriod: .inGracePeriod
                    case .revoked: .revoked
                    default: .unknown
                    }
                return StoreSubscriptionStatus(
                    state: state, productID: transaction.productID, originalTransactionID: transaction.originalID,
                    expirationDate: transaction.expirationDate, willAutoRenew: renewal.willAutoRenew,
                    autoRenewProductID: renewal.autoRenewPreference, isVerified: verified)
            }
        } catch {
            throw Self.failure(error)
        }
    }

    public func appTransaction() async throws -> String? {
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *) {
            do {
                return try await AppTransaction.shared.jwsRepresentation
            } catch {
                throw Self.failure(error)
            }
        }
        return nil
    }

    public func storefront() async -> StoreStorefront? {
        await Storefront.current.map { StoreStorefront(countryCode: $0.countryCode, id: $0.id) }
    }

    public func storefrontUpdates() -> AsyncStream<StoreStorefront> {
        AsyncStream { continuation in
            let updates = Storefront.updates  // following from now, not from when the task starts
            let task = Task {
                for await storefront in updates {
                    continuation.yield(StoreStorefront(countryCode: storefront.countryCode, id: storefront.id))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
