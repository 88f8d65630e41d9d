import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

/// The subscriptions a user holds, as `GET /v1/me/subscriptions` and the console show them.
public struct Subscriptions: Sendable {
    let book: any SubscriptionBook
    let catalog: ActiveCatalog
    let clock: any WallClock

    public init(book: any SubscriptionBook, catalog: ActiveCatalog, clock: any WallClock) {
        self.book = book
        self.catalog = catalog
        self.clock = clock
    }

    /// Each of the user's subscription groups; an expired one lists its product's win-back offers whose window
    /// (`within_days`) it is in.
    public func of(userID: String) async throws -> SubscriptionsResponse {
        let signals = try await book.subscriptionSignals(userID: userID)
        let now = clock.now()
        var statuses = SubscriptionFold.statuses(signals, at: now)
        for index in statuses.indices where statuses[index].state == .expired {
            let expiredAt = statuses[index].expiresAt
            let offers = (catalog.catalog.product(appStoreProductID: statuses[index].productID)?.winBackOffers ?? [])
                .filter { offer in
                    offer.rule.withinDays.map { OfferWindow(days: $0).admits(expiredAt: expiredAt, now: now) } ?? true
                }
                .map(\.id)
            statuses[index].winBackOffers = offers.isEmpty ? nil : offers
        }
        return SubscriptionsResponse(userID: userID, subscriptions: statuses)
    }

    /// Every period of the user's subscription `chain` the App Store told of, oldest first; nil when the user owns no
    /// such subscription.
    public func history(userID: String, chain: String) async throws -> SubscriptionHistoryResponse? {
        let periods = try await book.subscriptionSignals(userID: userID)
            .filter { $0.chain == chain && $0.kind == .transaction }
            .compactMap { signal -> SubscriptionHistoryPeriod? in
                guard let id = signal.transactionID, let product = signal.productID else { return nil }
                return SubscriptionHistoryPeriod(
                    transactionID: id, productID: product,
                    purchasedAt: signal.purchasedAt.map(Date.init(millisecondsSince1970:)),
                    expiresAt: signal.expiresAt.map(Date.init(millisecondsSince1970:)),
                    revokedAt: signal.revokedAt.map(Date.init(millisecondsSince1970:)),
                    upgraded: signal.upgraded == true)
            }
            .sorted {
                ($0.purchasedAt ?? .distantPast, $0.transactionID) < ($1.purchasedAt ?? .distantPast, $1.transactionID)
            }
        return periods.isEmpty ? nil : SubscriptionHistoryResponse(originalTransactionID: chain, periods: periods)
    }

    /// Whether the user may take each auto-renewable product's introductory offer: not once they subscribed in its
    /// group (the catalog's `subscription_group`, else the group their own chains of the product name), with the
    /// last transaction of that group's subscription (to name in a signed answer), ordered by product id.
    public func introductoryEligibility(userID: String) async throws
        -> [(product: CatalogProduct, eligible: Bool, transactionID: String?)]
    {
        let held = SubscriptionFold.statuses(try await book.subscriptionSignals(userID: userID), at: clock.now())
        return catalog.catalog.products.filter { $0.kind == .autoRenewableSubscription }.sorted { $0.id < $1.id }
            .map { product in
                let group =
                    product.subscriptionGroup ?? held.first { $0.productID == product.appStoreProductID }?.groupID
                let subscribed = held.first { $0.groupID == group }
                return (product, subscribed == nil, subscribed?.lastTransactionID ?? held.first?.lastTransactionID)
            }
    }

    /// `holdings` with the access a billing grace period keeps: each entitlement the product of a subscription in
    /// its grace period grants stays in force until the grace period ends ("continue to provide the service" while
    /// the App Store retries billing: Apple's `gracePeriodExpiresDate`).
    public func keepingGraceAccess(_ holdings: HoldingsResponse) async throws -> HoldingsResponse {
        let now = clock.now()
        let inGrace = SubscriptionFold.statuses(try await book.subscriptionSignals(userID: holdings.userID), at: now)
            .filter { $0.state == .inGracePeriod }
        var holdings = holdings
        for status in inGrace {
            guard let graceEnds = status.gracePeriodEndsAt, graceEnds > now,
                let product = catalog.catalog.product(appStoreProductID: status.productID)
            else { continue }
            for case .extendEntitlement(let name, _) in product.grants {
                if let index = holdings.entitlements.firstIndex(where: { $0.name == name }) {
                    let kept = holdings.entitlements[index].expiresAt.map { max($0, graceEnds) }
                    holdings.entitlements[index].expiresAt = kept
                    holdings.entitlements[index].active = true
                } else {
                    holdings.entitlements.append(Entitlement(name: name, expiresAt: graceEnds, active: true))
                }
            }
        }
        return holdings
    }
}
