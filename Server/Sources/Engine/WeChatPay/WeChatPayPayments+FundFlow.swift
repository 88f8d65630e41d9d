import ChannelSupport
import Foundation
import OrderSafeModel
import WeChatPay

extension WeChatPayPayments {
    /// The day's fund-flow bill of the BASIC account (`GET /v3/bill/fundflowbill`), downloaded and checked against its
    /// SHA-1 and its own summary, then compared with the day's trade bill `file` (``FundFlowCheck``). WeChat Pay
    /// answers `STATEMENT_CREATING` while it writes the bill (waiting) and `NO_STATEMENT_EXIST` for a day on which the
    /// account did not move (every payment of the trade bill then booked on another day).
    func fundFlowCheck(of day: StatementDay, tradeBill file: WeChatPayBillFile) async throws -> FundFlowCheck {
        let download: WeChatPayBillFile
        do throws(WeChatPayAPIError) {
            download = try await client.downloadFile(try await client.fundFlowBill(date: day.description))
        } catch {
            switch error {
            case .business(_, "STATEMENT_CREATING", let message):
                return FundFlowCheck(status: .waiting, reason: "STATEMENT_CREATING: \(message)")
            case .business(_, "NO_STATEMENT_EXIST", _):
                return try Self.fundFlowCheck(nil, tradeBill: file)
            case .billHashMismatch, .malformedResponse:
                return FundFlowCheck(status: .unreadable, reason: error.description)
            default:
                throw error
            }
        }
        let bill: WeChatPayFundFlowBill
        do {
            bill = try WeChatPayFundFlowBill(try download.whole())
        } catch {
            return FundFlowCheck(status: .unreadable, reason: "the fund-flow bill: \(error)")
        }
        return try Self.fundFlowCheck(bill, tradeBill: file)
    }

    /// Compares the fund-flow `bill` (nil: the account did not move) with the trade bill `file`, read once more a row
    /// at a time: a `SUCCESS` row is the 业务类型 `交易` movement of its 微信订单号, in, of its 应结订单金额; a `REFUND`
    /// row the `退款` movement of its 微信退款单号, out, of its 退款金额 (业务类型 as the format page lists them:
    /// https://pay.weixin.qq.com/docs/merchant/products/bill-download/format-fundflow.html). Fees (扣除交易手续费 less
    /// 退还交易手续费) are summed; other movements are counted.
    static func fundFlowCheck(_ bill: WeChatPayFundFlowBill?, tradeBill file: WeChatPayBillFile) throws
        -> FundFlowCheck
    {
        struct Key: Hashable {
            var type: String
            var id: String
        }
        var check = FundFlowCheck(status: .checked)
        var movements: [Key: (line: Int, fen: Int64)] = [:]
        for (index, row) in (bill?.rows ?? []).enumerated() {
            let fen = row.income ? row.amountFen : -row.amountFen
            switch row.businessType {
            case "交易", "退款":
                // The header is line 1; the same payment moved twice sums (and differs from the trade bill).
                let key = Key(type: row.businessType, id: row.businessID)
                let (sum, overflow) = movements[key, default: (index + 2, 0)].fen.addingReportingOverflow(fen)
                movements[key] = (movements[key]?.line ?? index + 2, overflow ? .max : sum)
            case "扣除交易手续费", "退还交易手续费":
                // Bounded by the bill's own sums, which its reader checked for overflow.
                check.feesMinor = check.feesMinor.subtractingReportingOverflow(fen).partialValue
            default:
                check.other += 1
            }
        }
        if let totals = bill?.totals {
            (check.rows, check.incomeMinor, check.expenseMinor) = (totals.count, totals.incomeFen, totals.expenseFen)
        }
        var rows = try WeChatPayTradeBill.Rows(try file.lines())
        var line = 1
        while let row = try rows.next() {
            line += 1
            let key: Key
            let expected: Int64
            let kind: StatementEntry.Kind
            switch row.state {
            case "SUCCESS":
                (key, expected, kind) = (Key(type: "交易", id: row.transactionID), row.settlementFen, .payment)
            case "REFUND":
                guard let refundID = row.refundID else { continue }
                (key, expected, kind) = (Key(type: "退款", id: refundID), -row.refundFen, .refund)
            default:
                continue
            }
            guard let moved = movements.removeValue(forKey: key) else {
                check.onlyInTradeBill += 1
                continue
            }
            if moved.fen == expected {
                check.matched += 1
            } else {
                check.differ(
                    .init(
                        businessID: key.id, kind: kind, tradeBillLine: line, tradeBillMinor: expected,
                        fundFlowLine: moved.line, fundFlowMinor: moved.fen))
            }
        }
        check.onlyInFundFlow = movements.count
        return check
    }
}
