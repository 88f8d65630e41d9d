import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@Suite("The console's reads: keyset pages, search, overview, sessions")
struct ConsoleQueryTests {
    /// 23 orders, several created in the same millisecond, of two users, channels and statuses.
    static func seed(_ ledger: SQLLedger) async throws -> [Order] {
        let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
        var orders: [Order] = []
        for index in 0..<23 {
            var new = Fixtures.newOrder(
                version, user: index % 3 == 0 ? "user-b" : "user-a", product: index % 2 == 0 ? "coins_60" : "box",
                channel: index % 2 == 0 ? .appStore : .alipay)
            // four at a time share a millisecond
            new.createdAt = Fixtures.now.addingTimeInterval(TimeInterval(index / 4))
            orders.append(try await ledger.createOrder(new, identity: Fixtures.randomIdentity).order)
        }
        _ = try await ledger.fulfil(
            Fixtures.payment(orders[5], txn: "T-5", channel: .alipay), at: Fixtures.now.addingTimeInterval(60))
        return orders
    }

    /// Every page of `query`, following the cursors.
    static func all(_ ledger: SQLLedger, _ query: OrderQuery) async throws -> [Order] {
        var query = query
        var seen: [Order] = []
        while true {
            let page = try await ledger.orders(query)
            #expect(page.orders.count <= query.limit)
            seen += page.orders
            guard let next = page.next else { return seen }
            query.after = next
        }
    }

    @Test("keyset pages list every order exactly once, newest first, ties included", arguments: TestEngine.available)
    func pages(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let orders = try await Self.seed(ledger)
            let expected = orders.reversed().map(\.orderNo)
            for limit in [1, 4, 5, 50] {
                #expect(
                    try await Self.all(ledger, OrderQuery(limit: limit)).map(\.orderNo) == expected, "limit \(limit)")
            }
            let userB = try await Self.all(ledger, OrderQuery(userID: "user-b", limit: 2)).map(\.orderNo)
            #expect(userB == orders.filter { $0.userID == "user-b" }.reversed().map(\.orderNo))
            let alipay = try await Self.all(ledger, OrderQuery(channel: .alipay, productID: "box", limit: 3))
            #expect(alipay.count == 11 && alipay.allSatisfy { $0.channel == .alipay })
            let fulfilled = try await ledger.orders(OrderQuery(status: .fulfilled))
            #expect(fulfilled.orders.map(\.orderNo) == [orders[5].orderNo])
            let window = try await Self.all(
                ledger,
                OrderQuery(
                    createdFrom: Fixtures.now.addingTimeInterval(1), createdBefore: Fixtures.now.addingTimeInterval(2),
                    limit: 3))
            #expect(window.map(\.orderNo) == orders[4..<8].reversed().map(\.orderNo))
        }
    }

    @Test(
        "a search names an order by number, UUID, transaction id or original transaction id, else a user",
        arguments: TestEngine.available)
    func search(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let orders = try await Self.seed(ledger)
            #expect(
                try await ledger.orders(OrderQuery(search: orders[7].orderNo)).orders.map(\.orderNo) == [
                    orders[7].orderNo
                ])
            // The order's UUID (what an App Store transaction carries as its appAccountToken), in either case.
            for uuid in [orders[3].orderUUID.uuidString.uppercased(), orders[3].orderUUID.uuidString.lowercased()] {
                #expect(try await ledger.orders(OrderQuery(search: uuid)).orders.map(\.orderNo) == [orders[3].orderNo])
            }
            #expect(try await ledger.orders(OrderQuery(search: "T-5")).orders.map(\.orderNo) == [orders[5].orderNo])
            #expect(try await ledger.orders(OrderQuery(search: "user-b", limit: 200)).orders.count == 8)
            #expect(try await ledger.orders(OrderQuery(search: "nobody")).orders.isEmpty)
        }
    }

    @Test(
        "a provider-signed amount of 2^63 − 1 is flagged and the overview still answers, revenue without it",
        arguments: TestEngine.available)
    func overviewSurvivesAbsurdAmounts(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let orders = try await Self.seed(ledger)
            for (index, txn) in ["huge-1", "huge-2"].enumerated() {
                let outcome = try await ledger.fulfil(
                    Fixtures.payment(orders[index + 1], txn: txn, amount: Money(amountMinor: .max, currency: .cny)),
                    at: Fixtures.now)
                guard case .flagged(_, .amountMismatch) = outcome else {
                    Issue.record("got \(outcome)")
                    return
                }
            }
            let overview = try await ledger.overview(
                now: Fixtures.now.addingTimeInterval(3600), days: 30, zone: TimeZone(identifier: "UTC")!)
            #expect(overview.ordersByStatus[.flagged] == 2)
            #expect(overview.revenue.map(\.amount) == [Money(amountMinor: 9900, currency: .cny)])
        }
    }

    @Test("the overview counts revenue by day, statuses and flags waiting", arguments: TestEngine.available)
    func overview(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let orders = try await Self.seed(ledger)
            _ = try await ledger.fulfil(
                Fixtures.payment(orders[1], txn: "T-1", amount: Money(amountMinor: 1, currency: .cny)), at: Fixtures.now
            )
            let zone = TimeZone(identifier: "Asia/Shanghai")!
            let overview = try await ledger.overview(now: Fixtures.now.addingTimeInterval(3600), days: 30, zone: zone)
            #expect(overview.ordersByStatus[.fulfilled] == 1)
            #expect(overview.ordersByStatus[.flagged] == 1)
            #expect(overview.ordersByStatus[.created] == 21)
            #expect(overview.flaggedWaiting == 1)
            // The 1-fen payment of orders[1] was of another amount than its order: flagged, not revenue.
            #expect(overview.revenue.map(\.amount) == [Money(amountMinor: 9900, currency: .cny)])
            #expect(overview.revenue.first?.day == "2026-11-18")
            #expect(overview.oldestUnsettled?.orderNo == orders[0].orderNo)
            #expect(
                try await ledger.resolveFlag(
                    orderNo: orders[1].orderNo, operatorName: "ops", note: "ok", at: Fixtures.now) == .done)
            #expect(try await ledger.overview(now: Fixtures.now, days: 30, zone: zone).flaggedWaiting == 0)
            let dossier = try #require(try await ledger.dossier(orderNo: orders[1].orderNo))
            #expect(!dossier.flagWaiting)
            #expect(dossier.events.last?.note == "ok")
            #expect(dossier.payments.map(\.providerTransactionID) == ["T-1"])
        }
    }

    @Test(
        "a session is found by its token's digest until it is closed; the operators' log is append-only",
        arguments: TestEngine.available)
    func sessions(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let record = ConsoleSessionRecord(
                operatorName: "ops", csrfToken: "c", createdAt: Fixtures.now, lastSeenAt: Fixtures.now)
            try await ledger.openSession(tokenSHA256: "d1", record)
            #expect(try await ledger.session(tokenSHA256: "d1") == record)
            try await ledger.closeSession(
                tokenSHA256: "d1", action: OperatorAction(operatorName: "ops", action: .signOut, at: Fixtures.now),
                idleBefore: Fixtures.now)
            #expect(try await ledger.session(tokenSHA256: "d1") == nil)
            #expect(try await ledger.operatorActions(limit: 10).map(\.action.rawValue) == ["sign_out", "sign_in"])
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in try await db.raw("DELETE FROM operator_actions").run() }
            }
        }
    }

    @Test(
        "an order's dossier shows the stored signals its events name, with their verdicts, never their bodies",
        arguments: TestEngine.available)
    func signals(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let orders = try await Self.seed(ledger)
            let entry = try await ledger.storeInbound(
                InboundSignal(
                    channel: .alipay, kind: .notify, headers: [:], body: Array("trade_status=TRADE_SUCCESS".utf8),
                    receivedAt: Fixtures.now))
            var payment = Fixtures.payment(orders[3], txn: "T-3", channel: .alipay)
            payment.evidence = "inbox:\(entry.id)"
            _ = try await ledger.fulfil(payment, at: Fixtures.now)
            try await ledger.finishInbound(id: entry.id, verdict: .applied, note: nil, at: Fixtures.now)
            let dossier = try #require(try await ledger.dossier(orderNo: orders[3].orderNo))
            #expect(dossier.signals.map(\.id) == [entry.id])
            #expect(dossier.signals.first?.verdict == .applied)
            #expect(dossier.signals.first?.bodyBytes == 26)
            #expect(OrderDossier.signalIDs(in: "alipay:T-3 inbox:12 and inbox:7x inbox:") == [12, 7])
        }
    }

    @Test("cursors parse strictly")
    func cursors() {
        #expect(OrderCursor("1795000000000_42") == OrderCursor(createdAt: 1_795_000_000_000, id: 42))
        for bad in ["", "_", "1_", "_1", "1_2_3", "-1_2", "1_x", "99999999999999999999_1", "1 _2", "１_2"] {
            #expect(OrderCursor(bad) == nil, "\(bad)")
        }
    }
}
