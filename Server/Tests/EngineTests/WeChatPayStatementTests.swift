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
}
