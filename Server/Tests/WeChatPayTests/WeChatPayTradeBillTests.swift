import ChannelSupport
import Testing

@testable import WeChatPay

/// WeChat Pay's trade bill in its published format (the ALL bill's 27 columns, a backtick before every field, the
/// summary block): parsed exactly into fen, refused with the line when it is cut short, malformed or does not add up.
@Suite("WeChat Pay trade bill: strict, exact, checked against its own totals")
struct WeChatPayTradeBillTests {
    static let header =
        "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注"
    static let paid =
        "`2026-11-25 10:01:02,`wx8888888888888888,`1900000109,`0,`,`4200000001202611250000000001,`OS20261125-AAAA0001,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`APP,`SUCCESS,`OTHERS,`CNY,`99.00,`0.00,`0,`0,`0.00,`0.00,`,`,`礼盒,`,`0.59,`0.60%,`99.00,`0.00,`"
    static let refunded =
        "`2026-11-25 12:00:00,`wx8888888888888888,`1900000109,`0,`,`4200000001202611250000000001,`OS20261125-AAAA0001,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`APP,`REFUND,`OTHERS,`CNY,`0.00,`0.00,`50000000012026112500000000001,`RF20261125-0001,`99.00,`0.00,`ORIGINAL,`SUCCESS,`礼盒,`,`-0.59,`0.60%,`0.00,`99.00,`"
    static let summaryHeader = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"
    static let summary = "`2,`99.00,`99.00,`0.00,`0.00,`99.00,`99.00"

    static func file(_ lines: [String], crlf: Bool = false) -> [UInt8] {
        Array((lines.joined(separator: crlf ? "\r\n" : "\n") + "\n").utf8)
    }

    @Test("a payment and its refund, in fen, with the summary that adds up")
    func parses() throws {
        let bill = try WeChatPayTradeBill(
            Self.file([Self.header, Self.paid, Self.refunded, Self.summaryHeader, Self.summary]))
        #expect(bill.rows.count == 2)
        let (payment, refund) = (bill.rows[0], bill.rows[1])
        #expect(payment.state == "SUCCESS" && payment.settlementFen == 9900 && payment.feeFen == 59)
        #expect(payment.outTradeNo == "OS20261125-AAAA0001" && payment.refundID == nil)
        #expect(refund.state == "REFUND" && refund.refundFen == 9900 && refund.feeFen == -59)
        #expect(refund.refundID == "50000000012026112500000000001" && refund.outRefundNo == "RF20261125-0001")
        #expect(bill.totals == .init(count: 2, settlementFen: 9900, refundFen: 9900, feeFen: 0, orderFen: 9900))
        // CRLF line ends and a byte-order mark: the same bill.
        var bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        bom += Self.file([Self.header, Self.paid, Self.refunded, Self.summaryHeader, Self.summary], crlf: true)
        #expect(try WeChatPayTradeBill(bom) == bill)
    }

    @Test(
        "a bill read a row at a time as it inflates gives the same rows and totals; a gzip cut short ends its lines with the inflater's failure"
    )
    func streamed() throws {
        let plain = Self.file([Self.header, Self.paid, Self.refunded, Self.summaryHeader, Self.summary])
        let bill = try WeChatPayTradeBill(plain)
        let gzipped = Zlib.deflate(plain, wrapping: .gzip)
        for file in [WeChatPayBillFile(bytes: plain, gzip: false), WeChatPayBillFile(bytes: gzipped, gzip: true)] {
            var rows = try WeChatPayTradeBill.Rows(try file.lines())
            var read: [WeChatPayTradeBill.Row] = []
            while let row = try rows.next() { read.append(row) }
            #expect(read == bill.rows && rows.totals == bill.totals)
            #expect(try rows.next() == nil && rows.totals == bill.totals)
            #expect(try file.whole() == plain)
        }
        let cut = WeChatPayBillFile(bytes: Array(gzipped.dropLast(12)), gzip: true)
        let lines = try cut.lines()
        var rows = try WeChatPayTradeBill.Rows(lines)
        _ = try? rows.next()
        while (try? rows.next()) != nil {}
        #expect(lines.failure == .source(.malformed("the compressed data ends early")))
        #expect(throws: ArchiveError.malformed("the compressed data ends early")) { try cut.whole() }
    }

    @Test("cut short, malformed or not adding up: refused, naming the line")
    func refusals() {
        func refusal(_ lines: [String]) -> WeChatPayBillError? {
            do {
                _ = try WeChatPayTradeBill(Self.file(lines))
                return nil
            } catch {
                return error
            }
        }
        #expect(
            refusal([Self.header, Self.paid, Self.refunded])
                == .truncated(line: 4, "no summary: the file ends in its rows"))
        #expect(
            refusal([Self.header, Self.paid, Self.summaryHeader])
                == .truncated(line: 4, "the summary header has no summary row"))
        let badAmount = Self.paid.replacingOccurrences(of: "`99.00,`0.00,`0,`0", with: "`99.001,`0.00,`0,`0")
        #expect(
            refusal([Self.header, badAmount, Self.summaryHeader, Self.summary])?.description.hasPrefix("line 2: 应结订单金额")
                == true)
        #expect(
            refusal([Self.header, String(Self.paid.dropLast(2)), Self.summaryHeader, Self.summary])?.description
                .hasPrefix("line 2: 26 fields") == true)
        // A comma inside a field (WeChat Pay's files do not quote): one field too many, refused, never shifted.
        let comma = Self.paid.replacingOccurrences(of: "`礼盒", with: "`礼盒,大号")
        #expect(
            refusal([Self.header, comma, Self.summaryHeader, Self.summary])?.description.hasPrefix("line 2: 28 fields")
                == true)
        let short = "`1,`99.00,`0.00,`0.00,`0.59,`99.00,`0.00"
        if case .totalsDiffer = refusal([Self.header, Self.paid, Self.refunded, Self.summaryHeader, short]) {
        } else {
            Issue.record("a summary that does not add up was taken")
        }
        #expect(
            refusal([Self.header.replacingOccurrences(of: "商户订单号", with: "订单号")])
                == .malformed(line: 1, "the detail header has no column 商户订单号"))
        #expect(refusal([]) == .malformed(line: 1, "the file is empty"))
        #expect(
            refusal([Self.header, Self.paid, Self.refunded, Self.summaryHeader, Self.summary, "more"])
                == .malformed(line: 6, "something follows the summary"))
    }
}
