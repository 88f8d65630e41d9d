import Foundation
import Ledger
import Logging
import OrderSafeModel
import SQLKit
import Testing

/// The engines the conformance suite runs on: SQLite always, PostgreSQL when `ORDERSAFE_TEST_POSTGRES_URL` is set
/// (`scripts/test` starts a private cluster and sets it).
enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static let postgresURL = ProcessInfo.processInfo.environment["ORDERSAFE_TEST_POSTGRES_URL"]

    static var available: [TestEngine] {
        if postgresURL == nil {
            print("""
                ⚠️  ORDERSAFE_TEST_POSTGRES_URL is not set: the ledger suite runs on SQLite only.
                ⚠️  Run scripts/test to run it on PostgreSQL too.
                """)
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }

    var testDescription: String { rawValue }

    /// A fresh, migrated, empty database of this engine; dropped by `body`'s end.
    func withLedger<R>(_ body: (LedgerDatabase, SQLLedger) async throws -> R) async throws -> R {
        let logger = TestLog.logger
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).sqlite").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let database = try LedgerDatabase(url: .sqliteFile(path: path), logger: logger)
            return try await run(database, body)
        case .postgres:
            let name = "ordersafe_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            try await Self.admin("CREATE DATABASE \(name)")
            var components = URLComponents(string: Self.postgresURL!)!
            components.path = "/\(name)"
            let database = try LedgerDatabase(url: .postgres(url: components.string!), logger: logger)
            do {
                let result = try await run(database, body)
                try await Self.admin("DROP DATABASE \(name)")
                return result
            } catch {
                try? await Self.admin("DROP DATABASE \(name)")
                throw error
            }
        }
    }

    private func run<R>(_ database: LedgerDatabase, _ body: (LedgerDatabase, SQLLedger) async throws -> R) async throws -> R {
        do {
            try await Migrator(database: database, logger: TestLog.logger).migrate()
            let result = try await body(database, SQLLedger(database: database))
            try await database.shutdown()
            return result
        } catch {
            try? await database.shutdown()
            throw error
        }
    }

    private static func admin(_ statement: String) async throws {
        let database = try LedgerDatabase(url: .postgres(url: postgresURL!), maxConnectionsPerEventLoop: 1, logger: TestLog.logger)
        do {
            try await database.withSession { db in try await db.raw(SQLQueryString(statement)).run() }
        } catch {
            try? await database.shutdown()
            throw error
        }
        try await database.shutdown()
    }
}

/// Builders for the suite's data.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static let catalog = try! Catalog(version: "test-1", products: [
        Product(
            id: "coins_60", kind: .consumable, title: "60 Coins", appStoreProductID: "test.coins60", channels: [.appStore],
            prices: [.appStore: Money(amountMinor: 600, currency: .cny)], grants: [.addBalance(balance: "coins", amount: 60)]),
        Product(
            id: "vip_month", kind: .nonRenewingSubscription, title: "VIP month", appStoreProductID: "test.vip", channels: [.appStore],
            prices: [.appStore: Money(amountMinor: 2500, currency: .cny)],
            grants: [.extendEntitlement(entitlement: "vip", period: GrantPeriod(count: 1, unit: .month))]),
        Product(
            id: "box", kind: .consumable, title: "Box", goods: .physical, channels: [.alipay, .wechatPay],
            prices: [.alipay: Money(amountMinor: 9900, currency: .cny), .wechatPay: Money(amountMinor: 9900, currency: .cny)],
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
