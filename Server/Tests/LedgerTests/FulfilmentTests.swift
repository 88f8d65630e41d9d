import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import SQLKit
import Testing

@Suite("Ledger fulfilment: exactly once, right user, right amount")
struct FulfilmentTests {
    @Test("a verified payment fulfils the order and applies its grants", arguments: TestEngine.available)
    func fulfils(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(
                Fixtures.newOrder(version, product: "box", channel: .alipay), identity: Fixtures.randomIdentity
            ).order
            let outcome = try await ledger.fulfil(Fixtures.payment(order, txn: "2026112222001"), at: Fixtures.now)
            guard case .fulfilled(let fulfilled) = outcome else {
                Issue.record("expected fulfilment, got \(outcome)")
                return
            }
            #expect(fulfilled.status == .fulfilled)
            let holdings = try await ledger.holdings(userID: "user-a", at: Fixtures.now)
            #expect(holdings.balances == [Balance(name: "boxes", amount: 1)])
            #expect(holdings.entitlements == [Entitlement(name: "box_owner", expiresAt: nil, active: true)])
            let events = try await ledger.events(orderNo: order.orderNo)
            #expect(events.map(\.kind.rawValue) == ["created", "paid", "fulfilled"])
            #expect(events.last?.cause == .notification)
            #expect(events.last?.evidence?.contains("2026112222001") == true)
        }
    }

    @Test("30 concurrent deliveries of one provider transaction credit it once", arguments: TestEngine.available)
    func concurrentDuplicates(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            let outcomes = try await withThrowingTaskGroup(of: FulfilmentOutcome.self) { group in
                for _ in 0..<30 {
                    group.addTask {
                        try await ledger.fulfil(Fixtures.payment(order, txn: "200000111"), at: Fixtures.now)
                    }
                }
                return try await group.reduce(into: [FulfilmentOutcome]()) { $0.append($1) }
            }
            let fulfilled = outcomes.filter { if case .fulfilled = $0 { true } else { false } }
            #expect(fulfilled.count == 1)
            #expect(outcomes.filter { $0 == .duplicate(orderNo: order.orderNo) }.count == 29)
            #expect(
                try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances == [
                    Balance(name: "coins", amount: 60)
                ])
            #expect(try await OrderLedgerTests.count(database, "grants") == 1)
            #expect(try await OrderLedgerTests.count(database, "payment_transactions") == 1)
        }
    }

    @Test("a provider amount that differs from the order flags it and grants nothing", arguments: TestEngine.available)
    func amountMismatch(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            for (txn, amount) in [
                ("t1", Money(amountMinor: 1, currency: .cny)), ("t2", Money(amountMinor: 600, currency: .usd)),
            ] {
                let outcome = try await ledger.fulfil(
                    Fixtures.payment(order, txn: txn, amount: amount), at: Fixtures.now)
                guard case .flagged(let flagged, .amountMismatch) = outcome else {
                    Issue.record("got \(outcome)")
                    return
                }
                #expect(flagged.status == .flagged)
            }
            #expect(try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances.isEmpty)
        }
    }

    @Test(
        "a second, different payment for a fulfilled order is recorded and flagged, never credited",
        arguments: TestEngine.available)
    func secondPayment(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            _ = try await ledger.fulfil(Fixtures.payment(order, txn: "first"), at: Fixtures.now)
            let outcome = try await ledger.fulfil(Fixtures.payment(order, txn: "second"), at: Fixtures.now)
            guard case .flagged(_, .orderAlreadySettled) = outcome else {
                Issue.record("got \(outcome)")
                return
            }
            #expect(
                try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances == [
                    Balance(name: "coins", amount: 60)
                ])
            #expect(try await OrderLedgerTests.count(database, "payment_transactions") == 2)
        }
    }

    @Test("a payment through another channel than the order's is flagged", arguments: TestEngine.available)
    func wrongChannel(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(
                Fixtures.newOrder(version, product: "box", channel: .alipay), identity: Fixtures.randomIdentity
            ).order
            let outcome = try await ledger.fulfil(
                Fixtures.payment(order, txn: "w1", channel: .wechatPay), at: Fixtures.now)
            guard case .flagged(_, .orderAlreadySettled) = outcome else {
                Issue.record("got \(outcome)")
                return
            }
        }
    }

    @Test("extending an entitlement twice stacks from its current expiry", arguments: TestEngine.available)
    func extendStacks(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            for txn in ["v1", "v2"] {
                let order = try await ledger.createOrder(
                    Fixtures.newOrder(version, product: "vip_month"), identity: Fixtures.randomIdentity
                ).order
                _ = try await ledger.fulfil(Fixtures.payment(order, txn: txn), at: Fixtures.now)
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let expected = calendar.date(byAdding: .month, value: 2, to: Fixtures.now)!
            let holdings = try await ledger.holdings(userID: "user-a", at: Fixtures.now)
            #expect(holdings.entitlements == [Entitlement(name: "vip", expiresAt: expected, active: true)])
            let later = try await ledger.holdings(userID: "user-a", at: expected.addingTimeInterval(1))
            #expect(later.entitlements.first?.active == false)
        }
    }

    @Test(
        "the schema refuses a payment or grant bound to a different user than its order",
        arguments: TestEngine.available)
    func rightUserConstraint(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in
                    try await db.raw(
                        """
                        INSERT INTO payment_transactions (channel, provider_txn_id, order_id, user_id, amount_minor, currency,
                                                          cause, evidence, recorded_at)
                        SELECT 'appstore', 'evil', id, 'user-b', 600, 'CNY', 'app', 'x', 0 FROM orders
                        WHERE order_no = \(bind: order.orderNo)
                        """
                    ).run()
                }
            }
        }
    }

    @Test("fulfilling an unknown order is an error, not a silent success", arguments: TestEngine.available)
    func unknownOrder(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let payment = VerifiedPayment(
                channel: .alipay, providerTransactionID: "x", orderNo: "OS-NONE",
                amount: Money(amountMinor: 1, currency: .cny),
                cause: .notification, evidence: "inbox:1")
            await #expect(throws: LedgerError.unknownOrder("OS-NONE")) {
                try await ledger.fulfil(payment, at: Fixtures.now)
            }
        }
    }
}
