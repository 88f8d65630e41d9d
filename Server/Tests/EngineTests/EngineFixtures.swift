import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel

@testable import Engine

enum EngineFixtures {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static let catalog = try! Catalog(
        version: "engine-1",
        products: [
            CatalogProduct(
                id: "coins_60", kind: .consumable, title: "60 Coins",
                appStoreProductID: "com.example.ordersafe.coins60", channels: [.appStore],
                prices: [.appStore: Money(amountMinor: 600, currency: .cny)],
                grants: [.addBalance(balance: "coins", amount: 60)]),
            CatalogProduct(
                id: "vip_monthly", kind: .autoRenewableSubscription, title: "VIP",
                appStoreProductID: "com.example.ordersafe.vip.monthly",
                channels: [.appStore], prices: [.appStore: Money(amountMinor: 2500, currency: .cny)],
                grants: [.extendEntitlement(entitlement: "vip", period: GrantPeriod(count: 1, unit: .month))]),
            CatalogProduct(
                id: "gift_box", kind: .consumable, title: "Gift box", goods: .physical,
                channels: [.alipay, .wechatPay],
                prices: [
                    .alipay: Money(amountMinor: 9900, currency: .cny),
                    .wechatPay: Money(amountMinor: 9900, currency: .cny),
                ],
                grants: [.addBalance(balance: "gift_boxes", amount: 1)]),
        ])

    static func order(
        _ ledger: any OrderBook, version: CatalogVersion, user: String = "u1", channel: Channel = .alipay
    ) async throws -> Order {
        try await ledger.createOrder(
            NewOrder(
                userID: user, productID: "gift_box", channel: channel, amount: Money(amountMinor: 9900, currency: .cny),
                catalogVersionID: version.id, createdAt: now),
            identity: { OrderIdentity(orderNo: "T\(UUID().uuidString.prefix(12))", orderUUID: UUID()) }
        ).order
    }
}

extension StatementEntries {
    /// Every entry, in the file's order.
    func all() throws -> [StatementEntry] {
        var reader = try reader()
        var entries: [StatementEntry] = []
        while let entry = try reader.next() { entries.append(entry) }
        return entries
    }
}
