import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

@testable import Engine

/// Every App Store notification type and subtype that moves a subscription, as the signals it carries (its
/// transaction, its renewal information), in every order they could arrive: each history folds to one documented
/// state. The table is the documentation: one row per history, the state it ends in on day 40.
@Suite("Subscription state: every notification, every arrival order, one state")
struct SubscriptionFoldTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_790_000_000_000
    static let now = Date(millisecondsSince1970: start + 40 * day)
    static let chain = "1000"
    static let basic = "vip.monthly", premium = "vip.premium.monthly", yearly = "vip.yearly"

    /// A notification as its signals: `signed` in days after `start`.
    struct Notification: CustomStringConvertible {
        var name: String
        var signals: [SubscriptionSignal]
        var description: String { name }
    }

    /// A transaction signed on day `signed`: one period of `product`, bought on `bought`, ending on `ends`.
    static func transaction(
        _ id: String, _ product: String, signed: Int64, bought: Int64, ends: Int64, revoked: Int64? = nil,
        upgraded: Bool? = nil
    ) -> SubscriptionSignal {
        var signal = SubscriptionSignal(chain: chain, kind: .transaction, signedAt: start + signed * day)
        signal.transactionID = id
        signal.groupID = "group"
        signal.productID = product
        signal.purchasedAt = start + bought * day
        signal.expiresAt = start + ends * day
        signal.revokedAt = revoked.map { start + $0 * day }
        signal.upgraded = upgraded
        return signal
    }

    /// The renewal information signed on day `signed`.
    static func renewal(
        signed: Int64, autoRenew: Bool = true, product: String = basic, retry: Bool? = nil, graceEnds: Int64? = nil,
        intent: Int64? = nil, priceIncrease: Int64? = nil
    ) -> SubscriptionSignal {
        var signal = SubscriptionSignal(chain: chain, kind: .renewal, signedAt: start + signed * day + 1)
        signal.autoRenew = autoRenew
        signal.renewalProductID = product
        signal.inBillingRetry = retry
        signal.gracePeriodEndsAt = graceEnds.map { start + $0 * day }
        signal.expirationIntent = intent
        signal.priceIncreaseStatus = priceIncrease
        return signal
    }

    static func n(_ name: String, _ signals: SubscriptionSignal...) -> Notification {
        Notification(name: name, signals: signals)
    }

    struct Expected: Equatable {
        var state: SubscriptionState
        var product: String
        var expiresDay: Int64
        var reason: ExpirationReason? = nil
        var renewalProduct: String? = basic
        var autoRenew: Bool? = true
        var graceEndsDay: Int64? = nil
        var priceIncrease: PriceIncrease? = nil
    }

    static let subscribed = n(
        "SUBSCRIBED INITIAL_BUY", transaction("1000", basic, signed: 0, bought: 0, ends: 30), renewal(signed: 0))
    static let renewed = n(
        "DID_RENEW", transaction("1001", basic, signed: 30, bought: 30, ends: 60), renewal(signed: 30))

    /// Each history and the state it ends in on day 40.
    static let histories: [(String, [Notification], Expected)] = [
        ("renewed", [subscribed, renewed], Expected(state: .active, product: basic, expiresDay: 60)),
        (
            "auto-renew off, then expired (voluntary)",
            [
                subscribed,
                n("DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED", renewal(signed: 10, autoRenew: false)),
                n(
                    "EXPIRED VOLUNTARY", transaction("1000", basic, signed: 30, bought: 0, ends: 30),
                    renewal(signed: 30, autoRenew: false, intent: 1)),
            ],
            Expected(state: .expired, product: basic, expiresDay: 30, reason: .voluntary, autoRenew: false)
        ),
        (
            "auto-renew off, then on again",
            [
                subscribed, renewed,
                n("DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED", renewal(signed: 33, autoRenew: false)),
                n("DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_ENABLED", renewal(signed: 35, autoRenew: true)),
            ],
            Expected(state: .active, product: basic, expiresDay: 60)
        ),
        (
            "billing failed with a grace period: access kept",
            [subscribed, n("DID_FAIL_TO_RENEW GRACE_PERIOD", renewal(signed: 30, retry: true, graceEnds: 46))],
            Expected(state: .inGracePeriod, product: basic, expiresDay: 30, graceEndsDay: 46)
        ),
        (
            "billing failed without a grace period",
            [subscribed, n("DID_FAIL_TO_RENEW", renewal(signed: 30, retry: true))],
            Expected(state: .inBillingRetry, product: basic, expiresDay: 30)
        ),
        (
            "the grace period ended, Apple still retries",
            [
                subscribed, n("DID_FAIL_TO_RENEW GRACE_PERIOD", renewal(signed: 30, retry: true, graceEnds: 36)),
                n("GRACE_PERIOD_EXPIRED", renewal(signed: 36, retry: true, graceEnds: 36)),
            ],
            Expected(state: .inBillingRetry, product: basic, expiresDay: 30, graceEndsDay: 36)
        ),
        (
            "billing recovered",
            [
                subscribed, n("DID_FAIL_TO_RENEW", renewal(signed: 30, retry: true)),
                n(
                    "DID_RENEW BILLING_RECOVERY", transaction("1001", basic, signed: 35, bought: 35, ends: 65),
                    renewal(signed: 35, retry: false)),
            ],
            Expected(state: .active, product: basic, expiresDay: 65)
        ),
        (
            "retries ran out",
            [
                subscribed, n("DID_FAIL_TO_RENEW", renewal(signed: 30, retry: true)),
                n(
                    "EXPIRED BILLING_RETRY", transaction("1000", basic, signed: 38, bought: 0, ends: 30),
                    renewal(signed: 38, retry: false, intent: 2)),
            ],
            Expected(state: .expired, product: basic, expiresDay: 30, reason: .billingError)
        ),
        (
            "a price increase never accepted",
            [
                subscribed, n("PRICE_INCREASE PENDING", renewal(signed: 20, priceIncrease: 0)),
                n(
                    "EXPIRED PRICE_INCREASE", transaction("1000", basic, signed: 30, bought: 0, ends: 30),
                    renewal(signed: 30, autoRenew: false, intent: 3, priceIncrease: 0)),
            ],
            Expected(
                state: .expired, product: basic, expiresDay: 30, reason: .priceIncreaseDeclined, autoRenew: false,
                priceIncrease: .pending)
        ),
        (
            "a price increase accepted",
            [
                subscribed, n("PRICE_INCREASE PENDING", renewal(signed: 20, priceIncrease: 0)),
                n("PRICE_INCREASE ACCEPTED", renewal(signed: 25, priceIncrease: 1)), renewed,
            ],
            // DID_RENEW's renewal information (day 30) is the newest, and says nothing of the increase any more.
            Expected(state: .active, product: basic, expiresDay: 60)
        ),
        (
            "the product was no longer for sale",
            [
                subscribed,
                n(
                    "EXPIRED PRODUCT_NOT_FOR_SALE", transaction("1000", basic, signed: 30, bought: 0, ends: 30),
                    renewal(signed: 30, autoRenew: false, intent: 4)),
            ],
            Expected(state: .expired, product: basic, expiresDay: 30, reason: .productUnavailable, autoRenew: false)
        ),
        (
            "upgraded from a yearly plan: the upgraded period no longer counts",
            [
                n(
                    "SUBSCRIBED INITIAL_BUY", transaction("1000", yearly, signed: 0, bought: 0, ends: 365),
                    renewal(signed: 0, product: yearly)),
                n(
                    "DID_CHANGE_RENEWAL_PREF UPGRADE",
                    transaction("1000", yearly, signed: 25, bought: 0, ends: 365, upgraded: true),
                    transaction("1001", premium, signed: 25, bought: 25, ends: 55),
                    renewal(signed: 25, product: premium)),
            ],
            Expected(state: .active, product: premium, expiresDay: 55, renewalProduct: premium)
        ),
        (
            "downgraded: the next period renews to the lower plan",
            [
                n(
                    "SUBSCRIBED INITIAL_BUY", transaction("1000", premium, signed: 20, bought: 20, ends: 50),
                    renewal(signed: 20, product: premium)),
                n("DID_CHANGE_RENEWAL_PREF DOWNGRADE", renewal(signed: 30, product: basic)),
            ],
            Expected(state: .active, product: premium, expiresDay: 50, renewalProduct: basic)
        ),
        (
            "the current period refunded",
            [
                subscribed, renewed,
                n("REFUND", transaction("1001", basic, signed: 36, bought: 30, ends: 60, revoked: 36)),
            ],
            Expected(state: .revoked, product: basic, expiresDay: 60)
        ),
        (
            "a refund reversed",
            [
                subscribed, renewed,
                n("REFUND", transaction("1001", basic, signed: 36, bought: 30, ends: 60, revoked: 36)),
                n("REFUND_REVERSED", transaction("1001", basic, signed: 38, bought: 30, ends: 60)),
            ],
            Expected(state: .active, product: basic, expiresDay: 60)
        ),
        (
            "an earlier period refunded: the current one stands",
            [
                subscribed, renewed,
                n("REFUND", transaction("1000", basic, signed: 36, bought: 0, ends: 30, revoked: 36)),
            ],
            Expected(state: .active, product: basic, expiresDay: 60)
        ),
        (
            "Family Sharing revoked",
            [
                subscribed, renewed,
                n("REVOKE", transaction("1001", basic, signed: 37, bought: 30, ends: 60, revoked: 37)),
            ],
            Expected(state: .revoked, product: basic, expiresDay: 60)
        ),
        (
            "an offer code redeemed after expiry (resubscribed)",
            [
                subscribed,
                n(
                    "EXPIRED VOLUNTARY", transaction("1000", basic, signed: 30, bought: 0, ends: 30),
                    renewal(signed: 30, autoRenew: false, intent: 1)),
                n(
                    "OFFER_REDEEMED RESUBSCRIBE", transaction("1001", basic, signed: 38, bought: 38, ends: 68),
                    renewal(signed: 38)),
            ],
            Expected(state: .active, product: basic, expiresDay: 68)
        ),
        (
            "resubscribed after expiry",
            [
                subscribed,
                n(
                    "EXPIRED VOLUNTARY", transaction("1000", basic, signed: 30, bought: 0, ends: 30),
                    renewal(signed: 30, autoRenew: false, intent: 1)),
                n(
                    "SUBSCRIBED RESUBSCRIBE", transaction("1001", basic, signed: 39, bought: 39, ends: 69),
                    renewal(signed: 39)),
            ],
            Expected(state: .active, product: basic, expiresDay: 69)
        ),
        (
            "the renewal date extended (one subscriber, then the summary of a mass extension)",
            [
                subscribed,
                n("RENEWAL_EXTENDED", transaction("1000", basic, signed: 29, bought: 0, ends: 45)),
                n("RENEWAL_EXTENSION SUMMARY"),
            ],
            Expected(state: .active, product: basic, expiresDay: 45)
        ),
    ]

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    static func fold(_ notifications: [Notification]) -> UserSubscription? {
        let statuses = SubscriptionFold.statuses(notifications.flatMap(\.signals), at: now)
        return statuses.count == 1 ? statuses[0] : nil
    }

    static func summary(_ status: UserSubscription?) -> Expected? {
        guard let status else { return nil }
        return Expected(
            state: status.state, product: status.productID,
            expiresDay: ((status.expiresAt?.millisecondsSince1970 ?? start) - start) / day,
            reason: status.expirationReason, renewalProduct: status.renewalProductID, autoRenew: status.autoRenew,
            graceEndsDay: status.gracePeriodEndsAt.map { ($0.millisecondsSince1970 - start) / day },
            priceIncrease: status.priceIncrease)
    }

    @Test("each history, in every arrival order, ends in its documented state", arguments: histories.indices)
    func everyOrderConverges(history index: Int) {
        let (name, notifications, expected) = Self.histories[index]
        for order in Self.permutations(notifications) {
            let got = Self.summary(Self.fold(order))
            #expect(got == expected, "\(name), arriving as \(order)")
        }
    }

    @Test("every notification type and subtype that moves a subscription is in the table")
    func tableCoversEveryType() {
        let named = Set(Self.histories.flatMap { $0.1.map(\.name) })
        for type in [
            "SUBSCRIBED INITIAL_BUY", "SUBSCRIBED RESUBSCRIBE", "DID_RENEW", "DID_RENEW BILLING_RECOVERY",
            "DID_CHANGE_RENEWAL_PREF UPGRADE", "DID_CHANGE_RENEWAL_PREF DOWNGRADE",
            "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_ENABLED",
            "DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW GRACE_PERIOD", "GRACE_PERIOD_EXPIRED", "EXPIRED VOLUNTARY",
            "EXPIRED BILLING_RETRY", "EXPIRED PRICE_INCREASE", "EXPIRED PRODUCT_NOT_FOR_SALE", "PRICE_INCREASE PENDING",
            "PRICE_INCREASE ACCEPTED", "OFFER_REDEEMED RESUBSCRIBE", "REFUND", "REFUND_REVERSED", "REVOKE",
            "RENEWAL_EXTENDED", "RENEWAL_EXTENSION SUMMARY",
        ] {
            #expect(named.contains(type), "\(type) is in no history")
        }
    }

    @Test("two chains of one group show the one giving access; none without a transaction")
    func twoChainsOfOneGroup() {
        var lapsed = Self.transaction("2000", Self.basic, signed: 0, bought: 0, ends: 30)
        lapsed.chain = "2000"
        let current = Self.renewed.signals + Self.subscribed.signals
        let statuses = SubscriptionFold.statuses([lapsed] + current, at: Self.now)
        #expect(statuses.map(\.originalTransactionID) == [Self.chain])
        #expect(statuses.first?.state == .active)
        #expect(SubscriptionFold.statuses([Self.renewal(signed: 3)], at: Self.now) == [])
    }
}
