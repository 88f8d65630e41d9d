import Alipay
import ChannelSupport
import Foundation
import OrderSafeModel
import Testing

@testable import Engine

/// Alipay's downloaded bill as the statement of a day: its rows as payments and refunds (a refund's amount is what its
/// negative 商家实收 returned), its totals, and a bill of another account or day refused whole.
@Suite("Alipay's bill as a day's statement")
struct AlipayStatementTests {
    static let rule = "#-----------------------------------------"
    static let header =
        "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注"

    /// The day's bill as Alipay serves it: a zip of the two files, GBK text and names.
    static func bill(account: String = "20880000000000010156", day: String = "2026年11月25日") -> [UInt8] {
        let detail = [
            "#支付宝业务明细查询", "#账号：[\(account)]", "#起始日期：[\(day) 00:00:00]   终止日期：[2026年11月26日 00:00:00]",
            rule + "业务明细列表" + rule, header,
            "2026112522001400000000000001\t,OS1\t,交易\t,礼盒,2026-11-25 10:01:00,2026-11-25 10:01:02,\t,\t,\t,\t,*张\t,99.00,99.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,\t,0.59,0.00,",
            "2026112522001400000000000001\t,OS1\t,退款\t,礼盒,2026-11-25 12:00:00,2026-11-25 12:00:01,\t,\t,\t,\t,*张\t,99.00,-99.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,RF1\t,-0.59,0.00,",
            rule + "业务明细列表结束" + rule, "#交易合计：1笔，商家实收共99.00元，商家优惠共0.00元",
            "#退款合计：1笔，商家实收退款共-99.00元，商家优惠退款共0.00元",
        ]
        let summary = [
            "门店编号,门店名称,交易订单总笔数,退款订单总笔数,订单金额（元）,商家实收（元）,支付宝优惠（元）,商家优惠（元）,卡消费金额（元）,服务费（元）,分润（元）,实收净额（元）",
            "合计,,1,1,99.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00",
        ]
        func gbk(_ text: String) -> [UInt8] { Array(text.data(using: AlipayBillArchive.encoding) ?? Data()) }
        var zip = ZipArchiveWriter(utf8Names: false)
        zip.add(name: gbk("2088_20261125_业务明细.csv"), contents: gbk(detail.joined(separator: "\r\n")))
        zip.add(name: gbk("2088_20261125_业务明细(汇总).csv"), contents: gbk(summary.joined(separator: "\r\n")))
        return zip.finished()
    }

    @Test("a payment and its refund, each with its line, amount and fee; the file's totals kept")
    func entries() throws {
        let day = try #require(StatementDay("2026-11-25"))
        let statement = try AlipayPayments.statement(zip: Self.bill(), day: day, sellerID: "2088000000000001")
        let entries = try statement.entries.all()
        #expect(entries.map(\.kind) == [.payment, .refund])
        let (payment, refund) = (entries[0], entries[1])
        #expect(payment.line == 6 && payment.orderNo == "OS1" && payment.providerTransactionID.hasSuffix("0001"))
        #expect(payment.amount == Money(amountMinor: 9900, currency: .cny) && payment.feeMinor == 59)
        #expect(refund.refundNo == "RF1" && refund.amount == Money(amountMinor: 9900, currency: .cny))
        #expect(refund.feeMinor == -59)
        #expect(statement.totals == StatementTotals(rows: 2, paidMinor: 9900, refundedMinor: 9900, feeMinor: 0))
    }

    @Test("the bill of another account, or of another day, is refused whole")
    func refusals() throws {
        let day = try #require(StatementDay("2026-11-25"))
        #expect(throws: StatementError.self) {
            try AlipayPayments.statement(
                zip: Self.bill(account: "20889999999999990156"), day: day, sellerID: "2088000000000001")
        }
        #expect(throws: StatementError.self) {
            try AlipayPayments.statement(zip: Self.bill(day: "2026年11月24日"), day: day, sellerID: "2088000000000001")
        }
        // Without a configured seller id the account is not checked.
        #expect(throws: Never.self) {
            try AlipayPayments.statement(zip: Self.bill(account: "20889999999999990156"), day: day, sellerID: nil)
        }
    }
}
