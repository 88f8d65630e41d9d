import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@testable import Engine

/// A provider whose statement, dates and refund answers the test writes.
private struct WrittenStatement: StatementSource {
    let day: StatementDay
    let entries: [StatementEntry]
    /// The day the provider dates each transaction (absent: not paid).
    let paidDays: [String: StatementDay]
    /// The refunds (merchant refund numbers) the provider's query confirms.
    let confirmedRefunds: Set<String>
    let ledger: any OrderBook
    /// The order query the provider answers.
    let query: AnsweringSettler
    /// Whether each buyer pays in their storefront's currency.
    var storefront = false
    /// The transactions that are access shared, not payments.
    var shared: Set<String> = []
    /// What the provider says of each reversed transaction (absent: not refunded).
    var refunds: [String: ProviderRefund] = [:]

    var utcOffset: Int { 8 * 3600 }
    var storefrontPrices: Bool { storefront }

    func statement(of day: StatementDay) async throws -> StatementAvailability {
        guard day == self.day else { return .notYet("only \(self.day) is written") }
        return .published(
            ProviderStatement(
                day: day, entries: entries,
                totals: StatementTotals(rows: entries.count, paidMinor: 0, refundedMinor: 0, feeMinor: 0)))
    }

    func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment {
        if shared.contains(payment.providerTransactionID) { return .shared }
        return paidDays[payment.providerTransactionID].map { .paid(on: $0) } ?? .notPaid
    }

    func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund {
        refunds[payment.providerTransactionID] ?? .notRefunded
    }

    func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery {
        try await query.recoverListedPayment(entry, channel: .alipay, ledger: ledger, rebuild: query.rebuildOrder)
    }

    func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws -> Bool {
        guard let refundNo = entry.refundNo, confirmedRefunds.contains(refundNo) else { return false }
        _ = try await ledger.reverse(
            Reversal(
                channel: payment.channel, providerTransactionID: payment.providerTransactionID, kind: .refunded,
                cause: .reconciliation, evidence: evidence),
            at: EngineFixtures.now)
        return true
    }
}

/// A provider's order query: what it says was paid, by order number.
private struct AnsweringSettler: OrderSettler {
    let ledger: any OrderBook
    let paid: [String: (transactionID: String, amount: Money)]
    var paymentWindow: TimeInterval { 1800 }

    func settle(_ order: Order, cause: EventCause) async throws -> SettlementState {
        guard let payment = paid[order.orderNo] else { return .unpaid }
        _ = try await ledger.fulfil(
            VerifiedPayment(
                channel: order.channel, providerTransactionID: payment.transactionID, orderNo: order.orderNo,
                amount: payment.amount, cause: cause, evidence: "query"),
            at: EngineFixtures.now)
        return .paid
    }

    func close(_ order: Order) async throws {}

    func rebuildOrder(_ orderNo: String) async throws -> OrderRebuild { .unrebuildable("a stand-in rebuilds nothing") }
}

@Suite("Statement reconciler: every outcome, and a day run twice")
struct StatementReconcilerTests {
    @Test(
        "matched, recovered after the query, refunds, other day, and each kind of flag", arguments: TestEngine.available
    )
    func outcomes(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(EngineFixtures.catalog, at: EngineFixtures.now)
            let day = StatementDay(containing: EngineFixtures.now, utcOffset: 8 * 3600)
            var orders: [String: Order] = [:]
            for name in [
                "matched", "differs", "recovered", "unconfirmed", "ledgerOnly", "lateNight", "reversedOnly",
                "refundedElsewhere", "refundedUnlisted", "sharedAccess",
            ] {
                orders[name] = try await EngineFixtures.order(ledger, version: version)
            }
            let price = Money(amountMinor: 9900, currency: .cny)
            for (name, transaction) in [
                ("matched", "TM"), ("differs", "TD"), ("ledgerOnly", "TL"), ("lateNight", "TN"),
                ("reversedOnly", "TV"), ("refundedElsewhere", "TW"), ("refundedUnlisted", "TZ"), ("sharedAccess", "TS"),
            ] {
                _ = try await ledger.fulfil(
                    VerifiedPayment(
                        channel: .alipay, providerTransactionID: transaction, orderNo: orders[name]!.orderNo,
                        amount: price, cause: .notification, evidence: "inbox"),
                    at: EngineFixtures.now)
            }
            // Reversed in the ledger that day: one the provider says it never refunded, one it refunded (undated), one
            // it dates that day although its statement lists no refund of it.
            for transaction in ["TV", "TW", "TZ"] {
                _ = try await ledger.reverse(
                    Reversal(
                        channel: .alipay, providerTransactionID: transaction, kind: .refunded, cause: .notification,
                        evidence: "inbox"),
                    at: EngineFixtures.now)
            }
            func payment(_ line: Int, _ name: String, _ transaction: String, minor: Int64 = 9900) -> StatementEntry {
                StatementEntry(
                    kind: .payment, line: line, orderNo: orders[name]?.orderNo ?? name,
                    providerTransactionID: transaction, amount: Money(amountMinor: minor, currency: .cny), feeMinor: 59)
            }
            func refund(_ line: Int, _ name: String, _ transaction: String, _ refundNo: String) -> StatementEntry {
                StatementEntry(
                    kind: .refund, line: line, orderNo: orders[name]!.orderNo, providerTransactionID: transaction,
                    refundNo: refundNo, amount: price, feeMinor: -59)
            }
            let source = WrittenStatement(
                day: day,
                entries: [
                    payment(2, "matched", "TM"), payment(3, "differs", "TD", minor: 9800),
                    payment(4, "recovered", "TR"),
                    payment(5, "unconfirmed", "TU"), payment(6, "OS-SOMEONE-ELSES", "TX"),
                    refund(7, "matched", "TM", "RF-M"), refund(8, "differs", "TD", "RF-D"),
                    payment(9, "reversedOnly", "TV"), payment(10, "refundedElsewhere", "TW"),
                    payment(11, "refundedUnlisted", "TZ"),
                ],
                paidDays: ["TL": day, "TN": day.next, "TM": day, "TD": day], confirmedRefunds: ["RF-M"], ledger: ledger,
                query: AnsweringSettler(ledger: ledger, paid: [orders["recovered"]!.orderNo: ("TR", price)]),
                shared: ["TS"], refunds: ["TW": .refundedUndated, "TZ": .refunded(on: day)])
            let reconciler = StatementReconciler(
                ledger: ledger, sources: [.alipay: source], clock: ManualClock(EngineFixtures.now),
                logger: TestLog.logger)

            let report = try await reconciler.reconcile(.alipay, day: day)
            #expect(report.status == .discrepancies)
            #expect(
                report.matched.count == 4 && report.recovered.count == 1
                    && report.recovered.amountMinor == ["CNY": 9900])
            #expect(report.refundsRecovered.count == 1 && report.refundsMatched.count == 0)
            #expect(report.otherDay == 1 && report.refundsOtherDay == 1 && report.shared == 1)
            let kinds = report.discrepancies.map { "\($0.kind.rawValue):\($0.transactionID)" }
            #expect(
                kinds == [
                    "amount_differs:TD", "not_in_ledger:TU", "unknown_order:TX", "refund_not_reversed:TD",
                    "not_in_statement:TL", "refund_not_in_statement:TV", "refund_not_in_statement:TZ",
                ])
            #expect(report.flagged.count == 7)
            let differs = try #require(report.discrepancies.first)
            #expect(differs.line == 3 && differs.statementAmount?.amountMinor == 9800 && differs.ledgerAmount == price)
            #expect(try await ledger.order(number: orders["recovered"]!.orderNo)?.status == .fulfilled)
            #expect(try await ledger.order(number: orders["matched"]!.orderNo)?.status == .refunded)
            #expect(try await ledger.order(number: orders["unconfirmed"]!.orderNo)?.status == .created)

            // Again: nothing new is recorded; what the first run recovered is still said to be recovered.
            let events = try await ledger.events(orderNo: orders["recovered"]!.orderNo)
            let again = try await reconciler.reconcile(.alipay, day: day)
            #expect(again.recovered == report.recovered && again.refundsRecovered == report.refundsRecovered)
            #expect(again.matched == report.matched && again.flagged == report.flagged)
            #expect(try await ledger.events(orderNo: orders["recovered"]!.orderNo) == events)
            #expect(try await reconciler.report(.alipay, day: day) == again)
            #expect(try await reconciler.reports(limit: 10).map(\.day) == [day.description])

            // A day the provider has not published waits, and a published day is never overwritten by a wait.
            let waiting = try await reconciler.reconcile(.alipay, day: day.next)
            #expect(waiting.status == .waiting && waiting.waitingFor != nil)
            await #expect(throws: StatementError.noStatements(.appStore)) {
                try await reconciler.reconcile(.appStore, day: day)
            }
        }
    }

    @Test(
        "where each buyer pays in their storefront's currency, a payment in another currency matches by its transaction; in the ledger's currency its amount must agree",
        arguments: [false, true])
    func storefronts(storefront: Bool) async throws {
        let engine = try #require(TestEngine.available.first)
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(EngineFixtures.catalog, at: EngineFixtures.now)
            let day = StatementDay(containing: EngineFixtures.now, utcOffset: 8 * 3600)
            let price = Money(amountMinor: 9900, currency: .cny)
            var entries: [StatementEntry] = []
            for (index, listed) in [
                Money(amountMinor: 1399, currency: .usd), Money(amountMinor: 9800, currency: .cny), nil, price,
            ].enumerated() {
                let order = try await EngineFixtures.order(ledger, version: version)
                _ = try await ledger.fulfil(
                    VerifiedPayment(
                        channel: .alipay, providerTransactionID: "T\(index)", orderNo: order.orderNo, amount: price,
                        cause: .notification, evidence: "inbox"),
                    at: EngineFixtures.now)
                entries.append(
                    StatementEntry(
                        kind: .payment, line: index + 1, orderNo: order.orderNo, providerTransactionID: "T\(index)",
                        amount: listed, feeMinor: 0))
            }
            let source = WrittenStatement(
                day: day, entries: entries, paidDays: [:], confirmedRefunds: [], ledger: ledger,
                query: AnsweringSettler(ledger: ledger, paid: [:]), storefront: storefront)
            let report = try await StatementReconciler(
                ledger: ledger, sources: [.alipay: source], clock: ManualClock(EngineFixtures.now),
                logger: TestLog.logger
            ).reconcile(.alipay, day: day)
            // A line without an amount (a transaction signed before Apple said its price) counts at the ledger's.
            let differs = storefront ? ["T1"] : ["T0", "T1"]
            #expect(report.discrepancies.map(\.transactionID) == differs)
            #expect(report.discrepancies.allSatisfy { $0.kind == .amountDiffers })
            #expect(
                report.matched.amountMinor
                    == (storefront ? ["USD": 1399, "CNY": 2 * 9900] : ["CNY": 2 * 9900]))
        }
    }

    @Test("days parse strictly and count across months and years")
    func days() {
        for bad in ["2026-02-29", "2026-13-01", "2026-1-01", "2026/01/01", "1999-12-31", "２０２６-01-01", "2026-01-001"] {
            #expect(StatementDay(bad) == nil, "\(bad)")
        }
        #expect(StatementDay("2024-02-29")?.next.description == "2024-03-01")
        #expect(StatementDay("2026-12-31")?.next.description == "2027-01-01")
        let day = StatementDay("2026-11-25")!
        // Midnight in Beijing is 16:00 UTC the day before.
        #expect(day.start(utcOffset: 8 * 3600) == Date(timeIntervalSince1970: 1_795_536_000))
        #expect(StatementDay(containing: Date(timeIntervalSince1970: 1_795_536_000), utcOffset: 8 * 3600) == day)
        #expect(StatementDay(containing: Date(timeIntervalSince1970: 1_795_535_999), utcOffset: 8 * 3600) < day)
    }

    @Test("a fund-flow difference is flagged with both lines; a fund-flow bill that cannot be read is flagged once")
    func fundFlowFlagged() {
        var report = StatementReport(channel: .wechatPay, day: "2026-11-25", status: .waiting, ranAt: Date())
        var check = FundFlowCheck(status: .checked)
        check.matched = 4
        check.differ(
            .init(
                businessID: "4200000001", kind: .payment, tradeBillLine: 3, tradeBillMinor: 9900, fundFlowLine: 7,
                fundFlowMinor: 9800))
        StatementReconciler.flag(check, into: &report)
        #expect(report.fundFlow == check && report.flagged.count == 1)
        let flagged = report.discrepancies.first
        #expect(flagged?.kind == .fundFlowDiffers && flagged?.transactionID == "4200000001" && flagged?.line == 3)
        #expect(flagged?.statementAmount == Money(amountMinor: 9900, currency: .cny))
        #expect(
            flagged?.detail
                == "the fund-flow bill's line 7 moves 9800 fen in for this payment; the trade bill says 9900 fen in")
        var unreadable = StatementReport(channel: .wechatPay, day: "2026-11-25", status: .waiting, ranAt: Date())
        StatementReconciler.flag(
            FundFlowCheck(status: .unreadable, reason: "the downloaded bill does not match its hash_value"),
            into: &unreadable)
        #expect(unreadable.flagged.count == 1 && unreadable.discrepancies.first?.kind == .fundFlowUnreadable)
        var waiting = StatementReport(channel: .wechatPay, day: "2026-11-25", status: .waiting, ranAt: Date())
        StatementReconciler.flag(FundFlowCheck(status: .waiting, reason: "STATEMENT_CREATING"), into: &waiting)
        #expect(waiting.flagged.count == 0 && waiting.fundFlow?.status == .waiting)
    }
}
