import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@Suite("Ledger reversals: refunds and revocations take back exactly what was granted, once")
struct ReversalTests {
    static func refund(_ txn: String, channel: Channel = .appStore, kind: Reversal.Kind = .refunded) -> Reversal {
        Reversal(channel: channel, providerTransactionID: txn, kind: kind, cause: .notification, evidence: "inbox:9")
    }

    @Test(
        "a refund takes back the units once; replays and concurrent deliveries change nothing",
        arguments: TestEngine.available)
    func refundOnce(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            for txn in ["a1", "a2"] {
                let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                    .order
                _ = try await ledger.fulfil(Fixtures.payment(order, txn: txn), at: Fixtures.now)
            }
            let outcomes = try await withThrowingTaskGroup(of: ReversalOutcome.self) { group in
                for _ in 0..<10 { group.addTask { try await ledger.reverse(Self.refund("a1"), at: Fixtures.now) } }
                return try await group.reduce(into: [ReversalOutcome]()) { $0.append($1) }
            }
            #expect(
                outcomes.filter { if case .reversed(let order) = $0 { order.status == .refunded } else { false } }.count
                    == 1)
            #expect(outcomes.filter { if case .alreadyReversed = $0 { true } else { false } }.count == 9)
            #expect(
                try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances == [
                    Balance(name: "coins", amount: 60)
                ])
            #expect(try await ledger.reverse(Self.refund("nope"), at: Fixtures.now) == .unknownPayment)
        }
    }

    @Test("a consumable already spent leaves a negative balance and a flagged order", arguments: TestEngine.available)
    func negative(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            _ = try await ledger.fulfil(Fixtures.payment(order, txn: "s1"), at: Fixtures.now)
            try await database.withSession { db in
                try await db.raw("UPDATE balances SET amount = 10 WHERE user_id = 'user-a'").run()  // 50 coins spent
            }
            guard
                case .flagged(let flagged, .negativeBalance) = try await ledger.reverse(
                    Self.refund("s1"), at: Fixtures.now)
            else {
                Issue.record("expected a flag")
                return
            }
            #expect(flagged.status == .flagged)
            #expect(
                try await ledger.holdings(userID: "user-a", at: Fixtures.now).balances == [
                    Balance(name: "coins", amount: -50)
                ])
            #expect(try await ledger.events(orderNo: order.orderNo).last?.kind == .flagged(.negativeBalance))
        }
    }

    @Test(
        "revoking an extension shortens it by its period; revoking an unlock ends it unless another payment unlocked it",
        arguments: TestEngine.available)
    func entitlements(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            var orders: [Order] = []
            for (index, product) in ["vip_month", "vip_month"].enumerated() {
                let order = try await ledger.createOrder(
                    Fixtures.newOrder(version, product: product), identity: Fixtures.randomIdentity
                ).order
                _ = try await ledger.fulfil(Fixtures.payment(order, txn: "v\(index)"), at: Fixtures.now)
                orders.append(order)
            }
            let twoMonths = try await ledger.holdings(userID: "user-a", at: Fixtures.now).entitlements[0].expiresAt!
            guard
                case .reversed(let revoked) = try await ledger.reverse(
                    Self.refund("v1", kind: .revoked), at: Fixtures.now)
            else {
                Issue.record("expected a reversal")
                return
            }
            #expect(revoked.status == .revoked)
            let oneMonth = try await ledger.holdings(userID: "user-a", at: Fixtures.now).entitlements[0].expiresAt!
            #expect(oneMonth < twoMonths && oneMonth > Fixtures.now)

            for (index, channel) in [Channel.alipay, .wechatPay].enumerated() {
                let order = try await ledger.createOrder(
                    Fixtures.newOrder(version, product: "box", channel: channel), identity: Fixtures.randomIdentity
                ).order
                _ = try await ledger.fulfil(Fixtures.payment(order, txn: "b\(index)"), at: Fixtures.now)
            }
            _ = try await ledger.reverse(Self.refund("b0", channel: .alipay), at: Fixtures.now)
            var owner = try await ledger.holdings(userID: "user-a", at: Fixtures.now).entitlements.first {
                $0.name == "box_owner"
            }
            #expect(owner?.active == true)
            _ = try await ledger.reverse(Self.refund("b1", channel: .wechatPay), at: Fixtures.now)
            owner = try await ledger.holdings(userID: "user-a", at: Fixtures.now.addingTimeInterval(1)).entitlements
                .first { $0.name == "box_owner" }
            #expect(owner?.active == false)
        }
    }
}
