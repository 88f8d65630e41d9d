import Foundation
import Testing

@testable import WeChatPay

/// WeChat Pay's fund-flow bill in its published format (eleven columns, a backtick before every field, the summary
/// of income and expense): parsed exactly into fen, refused with the line when it is cut short, malformed or does
/// not add up.
@Suite("WeChat Pay fund-flow bill: strict, exact, checked against its own totals")
struct WeChatPayFundFlowBillTests {
    static let header =
        "记账时间,微信支付业务单号,资金流水单号,业务名称,业务类型,收支类型,收支金额(元),账户结余(元),资金变更提交申请人,备注,业务凭证号"
    static let credited =
        "`2026-11-25 10:01:02,`4200000001202611250000000001,`4200000001202611250000000001-1,`交易,`交易,`收入,`99.00,`1099.00,`1900000109API,`,`S0001"
    static let fee =
        "`2026-11-25 10:01:02,`4200000001202611250000000001,`4200000001202611250000000001-2,`交易,`扣除交易手续费,`支出,`0.59,`1098.41,`1900000109API,`,`S0002"
    static let refund =
        "`2026-11-25 12:00:00,`50000000012026112500000000001,`50000000012026112500000000001-1,`退款,`退款,`支出,`99.00,`999.41,`1900000109API,`退款总金额99.00元;含手续费0.59元,`S0003"
    static let summaryHeader = "资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额"
    static let summary = "`3,`1,`99.00,`2,`99.59"

    static func file(_ lines: [String]) -> [UInt8] { Array((lines.joined(separator: "\r\n") + "\r\n").utf8) }

    @Test("a payment credited, its fee and a refund, in fen, with the summary that adds up")
    func parses() throws {
        let bill = try WeChatPayFundFlowBill(
            Self.file([Self.header, Self.credited, Self.fee, Self.refund, Self.summaryHeader, Self.summary]))
        #expect(bill.rows.count == 3)
        #expect(bill.rows[0].income && bill.rows[0].amountFen == 9900 && bill.rows[0].balanceFen == 109_900)
        #expect(!bill.rows[1].income && bill.rows[1].amountFen == 59 && bill.rows[1].businessType == "扣除交易手续费")
        #expect(bill.rows[2].businessID == "50000000012026112500000000001" && bill.rows[2].voucher == "S0003")
        #expect(bill.totals == .init(count: 3, incomeCount: 1, incomeFen: 9900, expenseCount: 2, expenseFen: 9959))
        // A header and summary header written with backticks, and full-width parentheses: the same bill.
        let backticked = Self.header.split(separator: ",").map { "`" + $0 }.joined(separator: ",")
            .replacingOccurrences(of: "(元)", with: "（元）")
        let summaryBackticked = Self.summaryHeader.split(separator: ",").map { "`" + $0 }.joined(separator: ",")
        #expect(
            try WeChatPayFundFlowBill(
                Self.file([backticked, Self.credited, Self.fee, Self.refund, summaryBackticked, Self.summary])) == bill)
    }

    @Test("cut short, malformed or not adding up: refused, naming the line")
    func refusals() {
        func refusal(_ lines: [String]) -> String? {
            do {
                _ = try WeChatPayFundFlowBill(Self.file(lines))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            refusal([Self.header, Self.credited])
                == "line 3: the file is cut short: no summary: the file ends in its rows")
        #expect(
            refusal([Self.header, Self.credited, Self.summaryHeader])?.hasPrefix("line 4: the file is cut short")
                == true)
        let sideways = Self.fee.replacingOccurrences(of: "`支出", with: "`转账")
        #expect(
            refusal([Self.header, Self.credited, sideways, Self.refund, Self.summaryHeader, Self.summary])
                == "line 3: 收支类型 '转账' is neither 收入 nor 支出")
        let negative = Self.fee.replacingOccurrences(of: "`0.59", with: "`-0.59")
        #expect(
            refusal([Self.header, Self.credited, negative, Self.refund, Self.summaryHeader, Self.summary])?.hasPrefix(
                "line 3: 收支金额(元)") == true)
        #expect(
            refusal([Self.header, Self.credited, Self.fee, Self.summaryHeader, Self.summary])?.hasPrefix(
                "the summary does not match the rows") == true)
        #expect(
            refusal([Self.header, Self.credited, Self.fee + ",`extra", Self.refund, Self.summaryHeader, Self.summary])
                == "line 3: 12 fields where the header names 11")
        #expect(
            refusal([Self.header.replacingOccurrences(of: "收支类型", with: "类型")])
                == "line 1: the detail header has no column 收支类型")
        #expect(refusal([]) == "line 1: the file is empty")
    }

    @Test("WeChat Pay's own example (资金账单结构说明): counts written `20.0` are read; its one row of twenty is refused")
    func documentationExample() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("RealSamples")
        let text = String(
            decoding: try Data(contentsOf: folder.appendingPathComponent("wechatpay-doc-fund-flow-example.csv")),
            as: UTF8.self)
        // The page shows one row of the twenty its summary counts: the counts are read, the sums do not agree.
        #expect(throws: WeChatPayBillError.self) { try WeChatPayFundFlowBill(Array(text.utf8)) }
        do {
            _ = try WeChatPayFundFlowBill(Array(text.utf8))
        } catch {
            #expect(error.description.hasPrefix("the summary does not match the rows"))
        }
        // Its row with a summary of its own, in the page's way of writing counts.
        let own = text.replacingOccurrences(of: "`20.0,`17.0,`0.35,`3.0,`0.18", with: "`1.0,`0,`0.00,`1.00,`0.02")
        let bill = try WeChatPayFundFlowBill(Array(own.utf8))
        #expect(bill.totals == .init(count: 1, incomeCount: 0, incomeFen: 0, expenseCount: 1, expenseFen: 2))
        let row = try #require(bill.rows.first)
        #expect(row.businessID == "50000305742018020103387128253" && row.businessType == "退款" && !row.income)
        #expect(row.amountFen == 2 && row.balanceFen == 17 && row.voucher == "REF4200000068201801293084726067")
        for count in ["`1.5", "`1.", "`+1", "`1.000"] {
            let odd = own.replacingOccurrences(of: "`1.0,`0,", with: "\(count),`0,")
            #expect(throws: WeChatPayBillError.self) { try WeChatPayFundFlowBill(Array(odd.utf8)) }
        }
    }
}
