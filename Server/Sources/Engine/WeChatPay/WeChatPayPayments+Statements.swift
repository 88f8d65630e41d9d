import Foundation
import Ledger
import OrderSafeModel
import WeChatPay

extension WeChatPayPayments: StatementSource {
    /// Beijing time: WeChat Pay's days end at midnight there.
    public var utcOffset: Int { 8 * 3600 }

    /// `GET /v3/bill/tradebill` (ALL, gzipped) of the day, downloaded, inflated, checked against its SHA-1 and parsed. WeChat Pay answers
    /// `400 STATEMENT_CREATING` while it writes the bill (from 08:00 the next day it is there) and
    /// `400 NO_STATEMENT_EXIST` for a day without a payment or refund — an empty statement (its error codes:
    /// https://pay.weixin.qq.com/docs/merchant/apis/jsapi-payment/get-trade-bill.html).
    public func statement(of day: StatementDay) async throws -> StatementAvailability {
        let bytes: [UInt8]
        do {
            bytes = try await client.download(try await client.tradeBill(date: day.description, gzip: true))
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
        let bill: WeChatPayTradeBill
        do {
            bill = try WeChatPayTradeBill(bytes)
        } catch {
            throw StatementError.unreadable(.wechatPay, day: day.description, error.description)
        }
        return .published(try Self.statement(bill, day: day, merchantID: client.merchantID, appID: client.appID))
    }

    /// A parsed trade bill as the statement of `day`: a payment per `SUCCESS` row (its order amount), a refund per
    /// `REFUND` row; a row of another merchant or app, or of an unknown currency, refuses the whole file.
    public static func statement(_ bill: WeChatPayTradeBill, day: StatementDay, merchantID: String, appID: String)
        throws(StatementError) -> ProviderStatement
    {
        var entries: [StatementEntry] = []
        entries.reserveCapacity(bill.rows.count)
        // The header is line 1: the rows follow it (blank lines are not counted by WeChat Pay's files).
        for (offset, row) in bill.rows.enumerated() {
            let line = offset + 2
            guard row.merchantID == merchantID, row.appID == appID else {
                throw .unreadable(
                    .wechatPay, day: day.description,
                    "line \(line): a row of merchant \(row.merchantID) and app \(row.appID), not ours")
            }
            guard let currency = CurrencyCode(row.currency) else {
                throw .unreadable(
                    .wechatPay, day: day.description, "line \(line): currency '\(row.currency.prefix(8))'")
            }
            switch row.state {
            case "SUCCESS":
                entries.append(
                    StatementEntry(
                        kind: .payment, line: line, orderNo: row.outTradeNo, providerTransactionID: row.transactionID,
                        amount: Money(amountMinor: row.orderFen, currency: currency), feeMinor: row.feeFen))
            case "REFUND":
                entries.append(
                    StatementEntry(
                        kind: .refund, line: line, orderNo: row.outTradeNo, providerTransactionID: row.transactionID,
                        refundNo: row.outRefundNo, amount: Money(amountMinor: row.refundFen, currency: currency),
                        feeMinor: row.feeFen))
            default:
                // REVOKED (撤销) and the like moved no money.
                continue
            }
        }
        return ProviderStatement(
            day: day, entries: entries,
            totals: StatementTotals(
                rows: bill.totals.count, paidMinor: bill.totals.settlementFen, refundedMinor: bill.totals.refundFen,
                feeMinor: bill.totals.feeFen))
    }

    /// The statement's order settled through the order query (the authority).
    public func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery {
        try await recoverListedPayment(entry, channel: .wechatPay, ledger: context.ledger)
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
