import ChannelSupport
import Foundation
import Ledger
import OrderSafeModel
import WeChatPay

extension WeChatPayPayments: StatementSource {
    /// Beijing time: WeChat Pay's days end at midnight there.
    public var utcOffset: Int { 8 * 3600 }

    /// `GET /v3/bill/tradebill` (ALL, gzipped) of the day, downloaded and checked against its SHA-1, then read a line
    /// at a time as it inflates: once to its end (every row, the summary against the rows) before anything is
    /// compared, and again for the comparison; the bill is kept compressed meanwhile. The day's fund-flow bill is
    /// checked against it (``fundFlowCheck(of:tradeBill:)``). WeChat Pay answers
    /// `400 STATEMENT_CREATING` while it writes the bill (from 08:00 the next day it is there) and
    /// `400 NO_STATEMENT_EXIST` for a day without a payment or refund — an empty statement (its error codes:
    /// https://pay.weixin.qq.com/docs/merchant/apis/jsapi-payment/get-trade-bill.html).
    public func statement(of day: StatementDay) async throws -> StatementAvailability {
        let file: WeChatPayBillFile
        do {
            file = try await client.downloadFile(try await client.tradeBill(date: day.description, gzip: true))
        } catch {
            guard case .business(_, let code, let message) = error else { throw error }
            switch code {
            case "STATEMENT_CREATING":
                return .notYet("STATEMENT_CREATING: WeChat Pay is writing the bill (\(message))")
            case "NO_STATEMENT_EXIST":
                return .published(
                    ProviderStatement(
                        day: day, entries: [],
                        totals: StatementTotals(rows: 0, paidMinor: 0, refundedMinor: 0, feeMinor: 0)))
            default:
                throw error
            }
        }
        var statement = try Self.statement(file, day: day, merchantID: client.merchantID, appID: client.appID)
        statement.fundFlow = try await fundFlowCheck(of: day, tradeBill: file)
        return .published(statement)
    }

    /// A downloaded bill as the statement of `day`, read once to its end (every row, the summary against the rows)
    /// and kept compressed, to be read again a row at a time.
    public static func statement(_ file: WeChatPayBillFile, day: StatementDay, merchantID: String, appID: String)
        throws -> ProviderStatement
    {
        let (entries, totals) = try StatementEntries.checked {
            try BillEntries(file: file, day: day, merchantID: merchantID, appID: appID)
        }
        return ProviderStatement(day: day, entries: entries, totals: totals)
    }

    /// A row's entry: a payment per `SUCCESS` row (its order amount), a refund per `REFUND` row; nil for a row that
    /// moved no money (REVOKED, 撤销, and the like); a row of another merchant or app, or of an unknown currency,
    /// refuses the whole file. `line`: the header is line 1 and the rows follow it (WeChat Pay's files hold no blank
    /// lines).
    static func entry(_ row: WeChatPayTradeBill.Row, line: Int, day: StatementDay, merchantID: String, appID: String)
        throws(StatementError) -> StatementEntry?
    {
        guard row.merchantID == merchantID, row.appID == appID else {
            throw .unreadable(
                .wechatPay, day: day.description,
                "line \(line): a row of merchant \(row.merchantID) and app \(row.appID), not ours")
        }
        guard let currency = CurrencyCode(row.currency) else {
            throw .unreadable(.wechatPay, day: day.description, "line \(line): currency '\(row.currency.prefix(8))'")
        }
        switch row.state {
        case "SUCCESS":
            return StatementEntry(
                kind: .payment, line: line, orderNo: row.outTradeNo, providerTransactionID: row.transactionID,
                amount: Money(amountMinor: row.orderFen, currency: currency), feeMinor: row.feeFen)
        case "REFUND":
            return StatementEntry(
                kind: .refund, line: line, orderNo: row.outTradeNo, providerTransactionID: row.transactionID,
                refundNo: row.outRefundNo, amount: Money(amountMinor: row.refundFen, currency: currency),
                feeMinor: row.feeFen)
        default:
            return nil
        }
    }

    static func totals(_ totals: WeChatPayTradeBill.Totals) -> StatementTotals {
        StatementTotals(
            rows: totals.count, paidMinor: totals.settlementFen, refundedMinor: totals.refundFen,
            feeMinor: totals.feeFen)
    }

    /// A downloaded bill's entries, read a row at a time as the bill inflates.
    struct BillEntries: StatementEntryReader {
        private let lines: PiecewiseLines
        private var rows: WeChatPayTradeBill.Rows<PiecewiseLines>
        private let day: StatementDay
        private let merchantID: String
        private let appID: String
        private var read = 0
        private(set) var totals: StatementTotals?

        init(file: WeChatPayBillFile, day: StatementDay, merchantID: String, appID: String) throws {
            self.day = day
            self.merchantID = merchantID
            self.appID = appID
            do {
                lines = try file.lines()
                rows = try WeChatPayTradeBill.Rows(lines)
            } catch {
                throw StatementError.unreadable(.wechatPay, day: day.description, "\(error)")
            }
        }

        mutating func next() throws -> StatementEntry? {
            while true {
                let row: WeChatPayTradeBill.Row?
                do {
                    row = try rows.next()
                } catch {
                    // A bill that stopped early because of what lies under it says why.
                    let reason = lines.failure.map { "\($0)" } ?? error.description
                    throw StatementError.unreadable(.wechatPay, day: day.description, reason)
                }
                guard let row else {
                    // Lines that ended because the data under them failed end no bill, whatever they held.
                    if let failure = lines.failure {
                        throw StatementError.unreadable(.wechatPay, day: day.description, failure.description)
                    }
                    totals = rows.totals.map(WeChatPayPayments.totals)
                    return nil
                }
                read += 1
                if let entry = try WeChatPayPayments.entry(
                    row, line: read + 1, day: day, merchantID: merchantID, appID: appID)
                {
                    return entry
                }
            }
        }
    }

    /// The statement's order settled through the order query (the authority).
    /// An order the ledger lacks is rebuilt first from the query's `attach` (``OrderProvenance``).
    public func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery {
        try await recoverListedPayment(entry, channel: .wechatPay, ledger: context.ledger, rebuild: rebuildOrder)
    }

    /// `GET /v3/pay/transactions/id/{transaction_id}`: the Beijing day of its `success_time`.
    public func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment {
        guard
            case .transaction(let transaction) = try await client.queryTransaction(
                transactionID: payment.providerTransactionID),
            transaction.tradeState.isPaid, let time = transaction.successTime,
            let date = ISO8601DateFormatter().date(from: time)
        else { return .notPaid }
        return .paid(on: StatementDay(containing: date, utcOffset: utcOffset))
    }

    /// `GET /v3/pay/transactions/id/{transaction_id}`: trade state `REFUND` ("转入退款") says it was refunded, not
    /// when (that is the refund's own, asked by its number, which the ledger's reversal does not keep).
    public func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund {
        guard
            case .transaction(let transaction) = try await client.queryTransaction(
                transactionID: payment.providerTransactionID)
        else { return .notRefunded }
        return transaction.tradeState == .refund ? .refundedUndated : .notRefunded
    }

    /// `GET /v3/refund/domestic/refunds/{out_refund_no}`: a full refund WeChat Pay says succeeded is applied as its
    /// `REFUND.SUCCESS` notification would be; a partial one is left for a human (the statement flags it).
    public func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws
        -> Bool
    {
        guard let outRefundNo = entry.refundNo,
            case .refund(let refund) = try await client.queryRefund(outRefundNo: outRefundNo),
            refund.status == .success, refund.transactionID == payment.providerTransactionID,
            refund.refundFen == refund.totalFen, refund.totalFen == payment.amount.amountMinor
        else { return false }
        let outcome = try await ReportedRefund(
            channel: .wechatPay, providerTransactionID: refund.transactionID, orderNo: payment.orderNo,
            refundedMinor: refund.refundFen, totalMinor: refund.totalFen, evidence: evidence, cause: .reconciliation
        ).apply(to: context.ledger, at: context.clock.now())
        return outcome != nil
    }
}
