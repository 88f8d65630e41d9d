import Foundation
import Ledger
import Logging
import OrderSafeModel

/// Checks a channel's day, line by line, against the statement its provider published (对账): every payment and
/// refund on the statement must be in the ledger, credited once with the same amount, and every payment the ledger
/// recorded that day on the statement. What is missing from the ledger is not taken on the statement's word: the
/// provider is asked, and what it confirms is recorded through the channel's own path (a payment as its query
/// records it, a refund as its notification would). What nothing settles is flagged, with its evidence.
/// Idempotent: a day run again records nothing new and keeps what its first run recovered.
public struct StatementReconciler: Sendable {
    let ledger: any OrderBook & StatementBook
    let sources: [Channel: any StatementSource]
    let clock: any WallClock
    let logger: Logger

    public init(
        ledger: any OrderBook & StatementBook, sources: [Channel: any StatementSource], clock: any WallClock,
        logger: Logger
    ) {
        self.ledger = ledger
        self.sources = sources
        self.clock = clock
        self.logger = logger
    }

    /// How many of a day's recorded payments are read at once.
    static let pageSize = 5_000

    /// The channels whose providers publish statements.
    public var channels: [Channel] { sources.keys.sorted { $0.rawValue < $1.rawValue } }

    /// The day before today in `channel`'s provider zone: the newest a provider publishes.
    public func yesterday(of channel: Channel) -> StatementDay? {
        guard let source = sources[channel], let today = day(of: channel, containing: clock.now()) else { return nil }
        return StatementDay(containing: today.start(utcOffset: source.utcOffset) - 1, utcOffset: source.utcOffset)
    }

    /// The day of `channel`'s statements that holds `date` (Beijing days for Alipay and WeChat Pay, UTC for the App
    /// Store).
    public func day(of channel: Channel, containing date: Date) -> StatementDay? {
        sources[channel].map { StatementDay(containing: date, utcOffset: $0.utcOffset) }
    }

    /// Reconciles one channel's day, keeps the report and returns it. `progress` is told the lines checked and
    /// the lines to check.
    public func reconcile(
        _ channel: Channel, day: StatementDay, progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> StatementReport {
        guard let source = sources[channel] else { throw StatementError.noStatements(channel) }
        let previous = try await report(channel, day: day)
        var report = StatementReport(channel: channel, day: day.description, status: .waiting, ranAt: clock.now())
        switch try await source.statement(of: day) {
        case .notYet(let reason):
            if let previous, previous.status != .waiting { return previous }
            report.waitingFor = reason
        case .published(let statement):
            report.statementTotals = statement.totals
            report.recoveredTransactions = previous?.recoveredTransactions ?? []
            report.recoveredRefunds = previous?.recoveredRefunds ?? []
            // What earlier runs recovered, looked up once per line.
            let recoveredBefore = Set(report.recoveredTransactions)
            let refundsRecoveredBefore = Set(report.recoveredRefunds)
            let start = day.start(utcOffset: source.utcOffset)
            let end = day.next.start(utcOffset: source.utcOffset)
            let total =
                statement.entries.count
                + (try await ledger.paymentCount(channel: channel, recordedFrom: start, before: end))
            var done = 0
            var onStatement = Set<String>()
            var refundsOnStatement = Set<String>()
            // The statement read once more, a line at a time: payments checked as they come, refunds after them
            // (a refund's payment may stand further down, and is recorded first).
            var reader = try statement.entries.reader()
            var refunds: [StatementEntry] = []
            while let entry = try reader.next() {
                guard entry.kind == .payment else {
                    refunds.append(entry)
                    continue
                }
                onStatement.insert(entry.providerTransactionID)
                try await check(
                    payment: entry, channel: channel, source: source, recoveredBefore: recoveredBefore, into: &report)
                done += 1
                progress(done, total)
            }
            for entry in refunds {
                refundsOnStatement.insert(entry.providerTransactionID)
                try await check(
                    refund: entry, channel: channel, source: source, recoveredBefore: refundsRecoveredBefore,
                    into: &report)
                done += 1
                progress(done, total)
            }
            // The day's recorded payments, a page at a time (a day may hold millions).
            var cursor: PaymentCursor?
            repeat {
                let page = try await ledger.payments(
                    channel: channel, recordedFrom: start, before: end, after: cursor, limit: Self.pageSize)
                for payment in page.payments {
                    if !onStatement.contains(payment.providerTransactionID) {
                        try await check(unlisted: payment, day: day, source: source, into: &report)
                    }
                    done += 1
                    progress(done, total)
                }
                cursor = page.next
            } while cursor != nil
            // Reversals recorded that day (read after this run's own), each on the statement or asked about.
            for payment in try await ledger.payments(channel: channel, reversedFrom: start, before: end)
            where !refundsOnStatement.contains(payment.providerTransactionID) {
                try await check(unlistedReversal: payment, day: day, source: source, into: &report)
            }
            if let fundFlow = statement.fundFlow { Self.flag(fundFlow, into: &report) }
            report.status = report.flagged.count == 0 ? .balanced : .discrepancies
        }
        try await ledger.saveStatementRun(
            StatementRun(
                channel: channel, day: report.day, status: report.status,
                report: String(decoding: try OrderSafeJSON.encoder().encode(report), as: UTF8.self),
                ranAt: report.ranAt))
        return report
    }

    /// The account's movements checked against the statement: kept with the report, each difference flagged with
    /// both lines, a fund-flow bill that could not be read flagged once.
    static func flag(_ fundFlow: FundFlowCheck, into report: inout StatementReport) {
        report.fundFlow = fundFlow
        if fundFlow.status == .unreadable {
            report.flag(
                .init(
                    kind: .fundFlowUnreadable, transactionID: "", detail: fundFlow.reason ?? "the fund-flow bill"))
        }
        for difference in fundFlow.differences {
            let direction = difference.fundFlowMinor >= 0 ? "in" : "out"
            report.flag(
                .init(
                    kind: .fundFlowDiffers, transactionID: difference.businessID, line: difference.tradeBillLine,
                    statementAmount: Money(amountMinor: abs(difference.tradeBillMinor), currency: .cny),
                    detail:
                        "the fund-flow bill's line \(difference.fundFlowLine) moves \(abs(difference.fundFlowMinor)) fen \(direction) for this \(difference.kind.rawValue); the trade bill says \(abs(difference.tradeBillMinor)) fen \(difference.tradeBillMinor >= 0 ? "in" : "out")"
                ))
        }
    }

    /// The kept report of one channel's day, if it ran.
    public func report(_ channel: Channel, day: StatementDay) async throws -> StatementReport? {
        try await ledger.statementRun(channel: channel, day: day.description).map(Self.decode)
    }

    /// The kept reports, newest day first, at most `limit`.
    public func reports(limit: Int) async throws -> [StatementReport] {
        try await ledger.statementRuns(limit: limit).map(Self.decode)
    }

    private static func decode(_ run: StatementRun) throws -> StatementReport {
        try OrderSafeJSON.decoder().decode(StatementReport.self, from: Data(run.report.utf8))
    }

    /// A payment on the statement: matched, recovered through the channel's query, or flagged.
    private func check(
        payment entry: StatementEntry, channel: Channel, source: any StatementSource, recoveredBefore: Set<String>,
        into report: inout StatementReport
    ) async throws {
        let evidence = "statement:\(channel.rawValue):\(report.day):line \(entry.line)"
        if let recorded = try await ledger.payment(channel: channel, providerTransactionID: entry.providerTransactionID)
        {
            if let amount = entry.amount, amount != recorded.amount,
                !(source.storefrontPrices && amount.currency != recorded.amount.currency)
            {
                report.flag(
                    .init(
                        kind: .amountDiffers, orderNo: recorded.orderNo, transactionID: entry.providerTransactionID,
                        line: entry.line, statementAmount: amount, ledgerAmount: recorded.amount,
                        detail: "\(evidence): the statement says \(amount), the ledger \(recorded.amount)"))
            } else if recoveredBefore.contains(entry.providerTransactionID) {
                report.recovered.add(entry.amount ?? recorded.amount)
            } else {
                report.matched.add(entry.amount ?? recorded.amount)
            }
            return
        }
        let orderNo: String?
        let answer: String
        switch try await source.recoverPayment(entry, evidence: evidence) {
        case .noOrder(let detail):
            report.flag(
                .init(
                    kind: .unknownOrder, orderNo: entry.orderNo, transactionID: entry.providerTransactionID,
                    line: entry.line, statementAmount: entry.amount, ledgerAmount: nil, detail: "\(evidence): \(detail)"
                ))
            return
        case .asked(let asked, let said):
            (orderNo, answer) = (asked, said)
        }
        if let now = try await ledger.payment(channel: channel, providerTransactionID: entry.providerTransactionID),
            entry.amount.map({ $0 == now.amount || (source.storefrontPrices && $0.currency != now.amount.currency) })
                ?? true
        {
            report.recovered.add(entry.amount ?? now.amount)
            report.recoveredTransactions.append(entry.providerTransactionID)
            logger.notice(
                "payment recovered from the statement",
                metadata: [
                    "order_no": "\(now.orderNo)", "channel": "\(channel.rawValue)", "day": "\(report.day)",
                ])
            return
        }
        report.flag(
            .init(
                kind: .notInLedger, orderNo: orderNo ?? entry.orderNo, transactionID: entry.providerTransactionID,
                line: entry.line, statementAmount: entry.amount, ledgerAmount: nil,
                detail: "\(evidence): asked, the provider answered \(answer)"))
    }

    /// A refund on the statement: matched when its payment is reversed, recovered through the provider's refund
    /// query, or flagged.
    private func check(
        refund entry: StatementEntry, channel: Channel, source: any StatementSource, recoveredBefore: Set<String>,
        into report: inout StatementReport
    ) async throws {
        let evidence = "statement:\(channel.rawValue):\(report.day):line \(entry.line)"
        let key = entry.refundNo ?? entry.providerTransactionID
        guard
            let recorded = try await ledger.payment(
                channel: channel, providerTransactionID: entry.providerTransactionID)
        else {
            report.flag(
                .init(
                    kind: .refundNotReversed, orderNo: entry.orderNo, transactionID: entry.providerTransactionID,
                    line: entry.line, statementAmount: entry.amount, ledgerAmount: nil,
                    detail: "\(evidence): refund \(key) of a payment the ledger does not hold"))
            return
        }
        if recorded.reversedAt != nil {
            if recoveredBefore.contains(key) {
                report.refundsRecovered.add(entry.amount ?? recorded.amount)
            } else {
                report.refundsMatched.add(entry.amount ?? recorded.amount)
            }
            return
        }
        var detail = "the provider's refund query did not confirm a full refund"
        do {
            if try await source.recoverRefund(entry, of: recorded, evidence: evidence) {
                report.refundsRecovered.add(entry.amount ?? recorded.amount)
                report.recoveredRefunds.append(key)
                logger.notice(
                    "refund recovered from the statement",
                    metadata: ["order_no": "\(recorded.orderNo)", "channel": "\(channel.rawValue)"])
                return
            }
        } catch {
            detail = "the refund query failed: \(error)"
        }
        report.flag(
            .init(
                kind: .refundNotReversed, orderNo: recorded.orderNo, transactionID: entry.providerTransactionID,
                line: entry.line, statementAmount: entry.amount, ledgerAmount: recorded.amount,
                detail: "\(evidence): refund \(key): \(detail)"))
    }

    /// A payment recorded on the day that the statement does not list: on another day's statement when the
    /// provider dates it there, flagged otherwise.
    private func check(
        unlisted payment: RecordedPayment, day: StatementDay, source: any StatementSource,
        into report: inout StatementReport
    ) async throws {
        let detail: String
        do {
            switch try await source.paymentDay(of: payment) {
            case .paid(let paid) where paid != day:
                report.otherDay += 1
                return
            case .shared:
                report.shared += 1
                return
            case .paid:
                detail = "the provider dates it \(day) but its statement does not list it"
            case .notPaid:
                detail = "the provider says it was not paid"
            }
        } catch {
            detail = "not on the statement, and asking the provider failed: \(error)"
        }
        report.flag(
            .init(
                kind: .notInStatement, orderNo: payment.orderNo, transactionID: payment.providerTransactionID,
                line: nil, statementAmount: nil, ledgerAmount: payment.amount, detail: detail))
    }

    /// A payment the ledger reversed on the day whose refund the statement does not list: on another day's
    /// statement when the provider refunded it then (or does not say when), flagged when it says it did not refund
    /// it or dates the refund on this day.
    private func check(
        unlistedReversal payment: RecordedPayment, day: StatementDay, source: any StatementSource,
        into report: inout StatementReport
    ) async throws {
        let detail: String
        do {
            switch try await source.refundDay(of: payment) {
            case .refunded(let refunded) where refunded != day:
                report.refundsOtherDay += 1
                return
            case .refundedUndated:
                report.refundsOtherDay += 1
                return
            case .shared:
                report.shared += 1
                return
            case .refunded:
                detail =
                    "reversed in the ledger; the provider dates the refund \(day) but its statement does not list it"
            case .notRefunded:
                detail = "reversed in the ledger, but the provider says it was not refunded"
            }
        } catch {
            detail = "reversed in the ledger and not on the statement; asking the provider failed: \(error)"
        }
        report.flag(
            .init(
                kind: .refundNotInStatement, orderNo: payment.orderNo, transactionID: payment.providerTransactionID,
                line: nil, statementAmount: nil, ledgerAmount: payment.amount, detail: detail))
    }
}

/// Why a statement could not be reconciled.
public enum StatementError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The channel's provider publishes no statement here (or the channel is not running).
    case noStatements(Channel)
    /// The provider's file could not be read: nothing of it was compared.
    case unreadable(Channel, day: String, String)
    /// The day's run took longer than its time box and was stopped (tried again later).
    case timedOut(Channel, day: String, Duration)

    public var description: String {
        switch self {
        case .noStatements(let channel): "\(channel.rawValue) has no statements to reconcile here"
        case .unreadable(let channel, let day, let reason): "the \(channel.rawValue) statement of \(day): \(reason)"
        case .timedOut(let channel, let day, let box):
            "the \(channel.rawValue) statement of \(day) was not done within \(box.components.seconds) s; stopped"
        }
    }
}
