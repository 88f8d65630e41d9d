import ChannelSupport
import Foundation
import OrderSafeModel
import Sandbox
import Testing
import WeChatPay

@testable import Engine

@Suite("WeChat Pay statement: a gzipped bill read a row at a time, checked whole before it is compared")
struct WeChatPayStatementTests {
    static let day = StatementDay("2026-11-25")!

    /// A day's bill in WeChat Pay's format: `payments` payments of 99.00 (fee 0.59) to merchant 1900000001.
    static func bill(payments: Int, merchant: String = "1900000001") -> [UInt8] {
        var text = SandboxWeChatPay.billHeader + "\r\n"
        for index in 0..<payments {
            let fields = [
                "2026-11-25 10:00:\(String(format: "%02d", index % 60))", "wx01", merchant, "0", "", "TX\(index)",
                "OS\(index)", "payer", "APP", "SUCCESS", "OTHERS", "CNY", "99.00", "0.00", "0", "0", "0.00", "0.00", "",
                "", "礼盒", "", "0.59", "0.60%", "99.00", "0.00", "",
            ]
            text += fields.map { "`" + $0 }.joined(separator: ",") + "\r\n"
        }
        let yuan = { (fen: Int) in String(format: "%d.%02d", fen / 100, fen % 100) }
        text += SandboxWeChatPay.billSummaryHeader + "\r\n"
        text +=
            [
                String(payments), yuan(payments * 9900), "0.00", "0.00", yuan(payments * 59), yuan(payments * 9900),
                "0.00",
            ]
            .map { "`" + $0 }.joined(separator: ",") + "\r\n"
        return Array(text.utf8)
    }

    static func entries(_ file: WeChatPayBillFile) throws -> (StatementEntries, StatementTotals?) {
        let statement = try WeChatPayPayments.statement(file, day: Self.day, merchantID: "1900000001", appID: "wx01")
        return (statement.entries, statement.totals)
    }

    @Test("every read of the kept file gives the same entries, numbered by their lines; the totals are the summary's")
    func readAgain() throws {
        let plain = Self.bill(payments: 3000)
        let file = WeChatPayBillFile(bytes: Zlib.deflate(plain, wrapping: .gzip), gzip: true)
        #expect(file.bytes.count * 5 < plain.count, "kept compressed")
        let (entries, totals) = try Self.entries(file)
        #expect(
            entries.count == 3000
                && totals == StatementTotals(rows: 3000, paidMinor: 29_700_000, refundedMinor: 0, feeMinor: 177_000))
        let first = try entries.all()
        #expect(first.count == 3000 && first[0].line == 2 && first[2999].line == 3001)
        #expect(
            first[2999].providerTransactionID == "TX2999"
                && first[2999].amount == Money(amountMinor: 9900, currency: .cny))
        #expect(try entries.all() == first)
    }

    @Test("a gzip cut short, a row of another merchant, a summary that does not add up: the whole day refused")
    func refusals() throws {
        let plain = Self.bill(payments: 3000)
        let gzipped = Zlib.deflate(plain, wrapping: .gzip)
        func refusal(_ file: WeChatPayBillFile) -> String? {
            do {
                _ = try Self.entries(file)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(
            refusal(WeChatPayBillFile(bytes: Array(gzipped.dropLast(12)), gzip: true))?.contains("ends early") == true)
        // The gzip's own CRC-32 wrong: refused whether the inflater says so with the last lines or after them (a bill
        // followed by a blank line over several of the inflater's pieces: every line with text was read first).
        let padded = plain + [UInt8](repeating: 0x20, count: 3 << 16) + [0x0A]
        for bytes in [plain, padded] {
            var badCheck = Zlib.deflate(bytes, wrapping: .gzip)
            badCheck[badCheck.count - 8] ^= 0xFF
            #expect(refusal(WeChatPayBillFile(bytes: badCheck, gzip: true))?.contains("incorrect data check") == true)
        }
        let foreign = Self.bill(payments: 2, merchant: "1900000002")
        #expect(
            refusal(WeChatPayBillFile(bytes: foreign, gzip: false))?.contains("line 2: a row of merchant 1900000002")
                == true)
        let lying = String(decoding: Self.bill(payments: 2), as: UTF8.self).replacingOccurrences(
            of: "\r\n`2,`198.00", with: "\r\n`3,`198.00")
        #expect(
            refusal(WeChatPayBillFile(bytes: Array(lying.utf8), gzip: false))?.contains(
                "the summary does not match the rows") == true)
    }

    /// A fund-flow bill in WeChat Pay's format: `movements` as (business id, 业务类型, fen: positive in, negative out).
    static func fundFlow(_ movements: [(String, String, Int64)]) throws -> WeChatPayFundFlowBill {
        let yuan = { (fen: Int64) in String(format: "%lld.%02lld", fen / 100, fen % 100) }
        var text = SandboxWeChatPay.fundFlowHeader + "\r\n"
        var balance: Int64 = 1_000_000
        for (index, (id, type, fen)) in movements.enumerated() {
            balance += fen
            let name = type == "退款" || type == "退还交易手续费" ? "退款" : type == "提现" ? "提现" : "交易"
            let fields = [
                "2026-11-25 10:00:00", id, "F\(index)", name, type, fen >= 0 ? "收入" : "支出", yuan(abs(fen)),
                yuan(balance), "system", "", "V\(index)",
            ]
            text += fields.map { "`" + $0 }.joined(separator: ",") + "\r\n"
        }
        let incomes = movements.map(\.2).filter { $0 >= 0 }
        let expenses = movements.map(\.2).filter { $0 < 0 }
        text += SandboxWeChatPay.fundFlowSummaryHeader + "\r\n"
        text +=
            [
                "\(movements.count)", "\(incomes.count)", yuan(incomes.reduce(0, +)), "\(expenses.count)",
                yuan(-expenses.reduce(0, +)),
            ].map { "`" + $0 }.joined(separator: ",") + "\r\n"
        return try WeChatPayFundFlowBill(Array(text.utf8))
    }

    @Test(
        "the fund-flow bill against the trade bill: a payment credited as billed matches, one credited another amount differs (both lines), one missing or extra is counted"
    )
    func fundFlow() throws {
        let trades = WeChatPayBillFile(bytes: Self.bill(payments: 3), gzip: false)
        let bill = try Self.fundFlow([
            ("TX0", "交易", 9900), ("TX0", "扣除交易手续费", -59), ("TX1", "交易", 9800), ("TX1", "扣除交易手续费", -59),
            ("TX9", "交易", 1000), ("CASH1", "提现", -5000),
        ])
        let check = try WeChatPayPayments.fundFlowCheck(bill, tradeBill: trades)
        #expect(check.status == .checked && check.matched == 1 && check.differing == 1)
        #expect(check.onlyInTradeBill == 1 && check.onlyInFundFlow == 1 && check.other == 1 && check.feesMinor == 118)
        #expect(check.rows == 6 && check.incomeMinor == 20700 && check.expenseMinor == 5118)
        #expect(
            check.differences == [
                .init(
                    businessID: "TX1", kind: .payment, tradeBillLine: 3, tradeBillMinor: 9900, fundFlowLine: 4,
                    fundFlowMinor: 9800)
            ])
        // Credited the other way round is a difference too; a day on which the account did not move matches nothing.
        let reversed = try Self.fundFlow([("TX0", "交易", -9900), ("TX1", "交易", 9900), ("TX2", "交易", 9900)])
        let other = try WeChatPayPayments.fundFlowCheck(reversed, tradeBill: trades)
        #expect(other.matched == 2 && other.differing == 1 && other.differences.first?.fundFlowMinor == -9900)
        let still = try WeChatPayPayments.fundFlowCheck(nil, tradeBill: trades)
        #expect(still.matched == 0 && still.onlyInTradeBill == 3 && still.differing == 0)
    }
}
