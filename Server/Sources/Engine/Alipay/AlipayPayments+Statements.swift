import Alipay
import Foundation
import Ledger
import OrderSafeModel

extension AlipayPayments: StatementSource {
    /// Beijing time: Alipay's days end at midnight there.
    public var utcOffset: Int { 8 * 3600 }

    /// How long after its day ends a missing bill still counts as not written yet: Alipay writes a day's bill by
    /// 09:00 the next day, "特殊情况可能延迟" (the method's page,
    /// https://opendocs.alipay.com/apis/api_15/alipay.data.dataservice.bill.downloadurl.query); after noon,
    /// `isp.bill_not_exist` means a day without a trade or refund.
    static let billDeadline: TimeInterval = 12 * 3600

    /// `alipay.data.dataservice.bill.downloadurl.query` (`trade`) of the day, the zip downloaded and read a line at a
    /// time as its files inflate and decode from GBK, checked against its own totals.
    public func statement(of day: StatementDay) async throws -> StatementAvailability {
        guard let gateway else { throw StatementError.noStatements(.alipay) }
        guard let url = try await gateway.billDownloadURL(billDate: day.description) else {
            let deadline = day.next.start(utcOffset: utcOffset).addingTimeInterval(Self.billDeadline)
            guard context.clock.now() >= deadline else {
                return .notYet("isp.bill_not_exist: Alipay has not written the bill yet")
            }
            return .published(
                ProviderStatement(
                    day: day, entries: [], totals: StatementTotals(rows: 0, paidMinor: 0, refundedMinor: 0, feeMinor: 0)
                ))
        }
        return .published(
            try Self.statement(zip: try await gateway.downloadBill(url: url), day: day, sellerID: sellerID))
    }

    /// A downloaded bill (the zip) as the statement of `day`, read once to its end as its files inflate (every row,
    /// the footer and the summary against the rows) and kept zipped, to be read again a row at a time.
    public static func statement(zip: [UInt8], day: StatementDay, sellerID: String?) throws -> ProviderStatement {
        let (entries, totals) = try StatementEntries.checked {
            try BillEntries(zip: zip, day: day, sellerID: sellerID)
        }
        return ProviderStatement(day: day, entries: entries, totals: totals)
    }

    /// A bill of another account or another day is refused whole.
    static func check(account: String?, startDay: String?, day: StatementDay, sellerID: String?)
        throws(StatementError)
    {
        if let sellerID, let account, !account.hasPrefix(sellerID) {
            throw .unreadable(.alipay, day: day.description, "the bill of account \(account.prefix(24)), not ours")
        }
        if let startDay, startDay != day.description {
            throw .unreadable(.alipay, day: day.description, "the bill of \(startDay.prefix(10))")
        }
    }

    /// A payment per 交易 row (its 订单金额), a refund per 退款 row (its 商家实收, negative in the file).
    static func entry(_ row: AlipayTradeBill.Row) -> StatementEntry {
        switch row.kind {
        case .trade:
            StatementEntry(
                kind: .payment, line: row.line, orderNo: row.outTradeNo, providerTransactionID: row.tradeNo,
                amount: Money(amountMinor: row.orderFen, currency: .cny), feeMinor: row.feeFen)
        case .refund:
            StatementEntry(
                kind: .refund, line: row.line, orderNo: row.outTradeNo, providerTransactionID: row.tradeNo,
                refundNo: row.refundRequestNo, amount: Money(amountMinor: -row.receiptFen, currency: .cny),
                feeMinor: row.feeFen)
        }
    }

    static func totals(_ totals: AlipayTradeBill.Totals, rows: Int) -> StatementTotals {
        StatementTotals(
            rows: rows, paidMinor: totals.tradeReceiptFen, refundedMinor: -totals.refundReceiptFen,
            feeMinor: totals.feeFen)
    }

    /// A downloaded bill's entries, read a row at a time as its files inflate.
    struct BillEntries: StatementEntryReader {
        private var reader: AlipayBillReader
        private let day: StatementDay
        private var read = 0
        private(set) var totals: StatementTotals?

        init(zip: [UInt8], day: StatementDay, sellerID: String?) throws {
            self.day = day
            do {
                reader = try AlipayBillReader(zip: zip)
            } catch {
                throw StatementError.unreadable(.alipay, day: day.description, error.description)
            }
            try AlipayPayments.check(account: reader.account, startDay: reader.startDay, day: day, sellerID: sellerID)
        }

        mutating func next() throws -> StatementEntry? {
            let row: AlipayTradeBill.Row?
            do {
                row = try reader.next()
            } catch {
                throw StatementError.unreadable(.alipay, day: day.description, error.description)
            }
            guard let row else {
                totals = reader.totals.map { AlipayPayments.totals($0, rows: read) }
                return nil
            }
            read += 1
            return AlipayPayments.entry(row)
        }
    }

    /// The statement's order settled through the order query (the authority); an order the ledger lacks is rebuilt
    /// from the trade query's `passback_params` (``OrderProvenance``).
    public func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery {
        try await recoverListedPayment(entry, channel: .alipay, ledger: context.ledger, rebuild: rebuildOrder)
    }

    /// `alipay.trade.query`: the Beijing day of its `send_pay_date`, which a trade refunded since (TRADE_CLOSED)
    /// keeps.
    public func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment {
        guard let gateway else { throw StatementError.noStatements(.alipay) }
        guard case .trade(let trade) = try await gateway.queryTrade(outTradeNo: payment.orderNo),
            trade.status != .waitBuyerPay, trade.tradeNo == payment.providerTransactionID, let paidAt = trade.paidAt
        else { return .notPaid }
        return .paid(on: StatementDay(containing: paidAt, utcOffset: utcOffset))
    }

    /// `alipay.trade.query`: a paid trade refunded in full answers `TRADE_CLOSED` with its `send_pay_date`
    /// ("支付完成后全额退款"), which says it was refunded, not when.
    public func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund {
        guard let gateway else { throw StatementError.noStatements(.alipay) }
        guard case .trade(let trade) = try await gateway.queryTrade(outTradeNo: payment.orderNo),
            trade.tradeNo == payment.providerTransactionID, trade.status == .tradeClosed, trade.paidAt != nil
        else { return .notRefunded }
        return .refundedUndated
    }

    /// `alipay.trade.fastpay.refund.query` of the refund request the bill names: a full refund Alipay confirms is
    /// applied as its notification would be; a partial one is left for a human (the statement flags it). Alipay: an
    /// answer with `refund_amount` whose `refund_status` is absent or `REFUND_SUCCESS` is a refund that went through.
    public func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws
        -> Bool
    {
        guard let gateway else { throw StatementError.noStatements(.alipay) }
        guard let request = entry.refundNo,
            case .refund(_, let amount, let status) = try await gateway.queryRefund(
                outTradeNo: payment.orderNo, outRequestNo: request),
            status == nil || status == "REFUND_SUCCESS", amount == payment.amount
        else { return false }
        let outcome = try await ReportedRefund(
            channel: .alipay, providerTransactionID: payment.providerTransactionID, orderNo: payment.orderNo,
            refundedMinor: amount.amountMinor, totalMinor: payment.amount.amountMinor, evidence: evidence,
            cause: .reconciliation
        ).apply(to: context.ledger, at: context.clock.now())
        return outcome != nil
    }
}
