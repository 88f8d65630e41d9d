import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel

/// Builders for the suite's data.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static let catalog = try! Catalog(
        version: "test-1",
        products: [
            CatalogProduct(
                id: "coins_60", kind: .consumable, title: "60 Coins", appStoreProductID: "test.coins60",
                channels: [.appStore],
                prices: [.appStore: Money(amountMinor: 600, currency: .cny)],
                grants: [.addBalance(balance: "coins", amount: 60)]),
            CatalogProduct(
                id: "vip_month", kind: .nonRenewingSubscription, title: "VIP month", appStoreProductID: "test.vip",
                channels: [.appStore],
                prices: [.appStore: Money(amountMinor: 2500, currency: .cny)],
                grants: [.extendEntitlement(entitlement: "vip", period: GrantPeriod(count: 1, unit: .month))]),
            CatalogProduct(
                id: "box", kind: .consumable, title: "Box", goods: .physical, channels: [.alipay, .wechatPay],
                prices: [
                    .alipay: Money(amountMinor: 9900, currency: .cny),
                    .wechatPay: Money(amountMinor: 9900, currency: .cny),
                ],
                grants: [.addBalance(balance: "boxes", amount: 1), .unlockEntitlement(entitlement: "box_owner")]),
        ])

    static func newOrder(
        _ version: CatalogVersion, user: String = "user-a", product: String = "coins_60", channel: Channel = .appStore,
        key: String? = nil, hash: String = "h1"
    ) -> NewOrder {
        let amount = catalog.product(id: product)!.price(for: channel)!
        return NewOrder(
            userID: user, productID: product, channel: channel, amount: amount, catalogVersionID: version.id,
            idempotency: key.map { IdempotencyToken(key: $0, requestSHA256: hash) }, createdAt: now)
    }

    /// A fresh random identity on every call.
    static let randomIdentity: @Sendable () -> OrderIdentity = {
        OrderIdentity(orderNo: "T-\(UUID().uuidString.prefix(13))", orderUUID: UUID())
    }

    static func payment(_ order: Order, txn: String, amount: Money? = nil, channel: Channel? = nil) -> VerifiedPayment {
        VerifiedPayment(
            channel: channel ?? order.channel, providerTransactionID: txn, orderNo: order.orderNo,
            amount: amount ?? order.amount, cause: .notification, evidence: "inbox:1")
    }
}
