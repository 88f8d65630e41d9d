import ChannelSupport
import Foundation
import OracleSupport
import OrderSafeModel
import Sandbox
import Testing

@testable import Alipay

/// Alipay's trade bill as it is downloaded: a zip of two GBK CSV files (业务明细 and 业务明细(汇总)) whose names are GBK
/// too; values padded with tabs; a refund a row of its own with a negative 商家实收; the footer's 交易合计 and 退款合计
/// and the summary's 合计 row, which the rows must add up to. Parsed exactly into fen; refused, naming the file and
/// line, when it is cut short, malformed or does not add up.
@Suite("Alipay trade bill: zip, GBK, strict, checked against its own totals")
struct AlipayTradeBillTests {
    static let header = SandboxAlipay.billHeader
    static let paid =
        "2026112522001400000000000001\t,OS20261125-AAAA0001\t,交易\t,礼盒,2026-11-25 10:01:00,2026-11-25 10:01:02,\t,\t,\t,\t,*张(138****0000)\t,99.00,99.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,\t,0.59,0.00,备注，含逗号, 和英文逗号"
    static let paidToo =
        "2026112522001400000000000002\t,OS20261125-AAAA0002\t,交易\t,礼盒,2026-11-25 23:59:58,2026-11-25 23:59:59,\t,\t,\t,\t,*李(139****0000)\t,6.00,6.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,\t,0.04,0.00,"
    static let refunded =
        "2026112522001400000000000001\t,OS20261125-AAAA0001\t,退款\t,礼盒,2026-11-25 12:00:00,2026-11-25 12:00:01,\t,\t,\t,\t,*张(138****0000)\t,99.00,-99.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,RF-OS20261125-AAAA0001\t,-0.59,0.00,"
    static let rule = "#-----------------------------------------"

    static func detail(
        rows: [String] = [paid, paidToo, refunded], trades: String = "#交易合计：2笔，商家实收共105.00元，商家优惠共0.00元",
        refunds: String = "#退款合计：1笔，商家实收退款共-99.00元，商家优惠退款共0.00元"
    ) -> [String] {
        [
            "#支付宝业务明细查询", "#账号：[20880000000000010156]",
            "#起始日期：[2026年11月25日 00:00:00]   终止日期：[2026年11月26日 00:00:00]", rule + "业务明细列表" + rule, header,
        ] + rows + [rule + "业务明细列表结束" + rule, trades, refunds, "#导出时间：[2026年11月26日 05:46:49]"]
    }

    static func summary(total: String = "合计,,2,1,105.00,6.00,0.00,0.00,0.00,0.04,0.00,5.96") -> [String] {
        [
            "#支付宝业务汇总查询", "#账号：[20880000000000010156]", rule + "业务汇总列表" + rule, SandboxAlipay.billSummaryHeader,
            ",,2,1,105.00,6.00,0.00,0.00,0.00,0.04,0.00,5.96", total, rule + "业务汇总列表结束" + rule,
        ]
    }

    static func gbk(_ lines: [String]) -> [UInt8] {
        Array((lines.joined(separator: "\r\n") + "\r\n").data(using: AlipayBillArchive.encoding)!)
    }

    /// The download: both files in GBK, named in GBK, deflated.
    static func zip(detail: [UInt8] = gbk(detail()), summary: [UInt8]? = gbk(summary()), extra: Bool = false)
        -> [UInt8]
    {
        var writer = ZipArchiveWriter(utf8Names: false)
        let name = { (text: String) in Array(text.data(using: AlipayBillArchive.encoding)!) }
        writer.add(name: name("20880000000000010156_20261125_业务明细.csv"), contents: detail)
        if let summary { writer.add(name: name("20880000000000010156_20261125_业务明细(汇总).csv"), contents: summary) }
        if extra { writer.add(name: name("20880000000000010156_20261125_业务明细.csv"), contents: detail) }
        return writer.finished()
    }

    @Test("two payments and a refund, in fen, with the footer and the summary that add up")
    func parses() throws {
        let bill = try AlipayTradeBill(zip: Self.zip())
        #expect(bill.account == "20880000000000010156" && bill.startDay == "2026-11-25")
        #expect(bill.rows.map(\.kind) == [.trade, .trade, .refund])
        let (payment, refund) = (bill.rows[0], bill.rows[2])
        #expect(payment.line == 6 && payment.tradeNo == "2026112522001400000000000001")
        #expect(payment.outTradeNo == "OS20261125-AAAA0001" && payment.orderFen == 9900 && payment.receiptFen == 9900)
        #expect(payment.feeFen == 59 && payment.refundRequestNo.isEmpty)
        #expect(payment.finishedAt == BeijingTime.date("2026-11-25 10:01:02"))
        #expect(
            refund.receiptFen == -9900 && refund.feeFen == -59 && refund.refundRequestNo == "RF-OS20261125-AAAA0001")
        #expect(
            bill.totals
                == .init(tradeCount: 2, tradeReceiptFen: 10500, refundCount: 1, refundReceiptFen: -9900, feeFen: 4))
    }

    @Test("a bill larger than the pieces it inflates in reads whole, its lines numbered across them")
    func manyPieces() throws {
        let rows = (1...3000).map { index in
            Self.paidToo.replacingOccurrences(of: "OS20261125-AAAA0002", with: "OS20261125-\(index)")
                .replacingOccurrences(of: "2026112522001400000000000002", with: "20261125220014\(index)")
        }
        let detail = Self.detail(
            rows: rows, trades: "#交易合计：3000笔，商家实收共18000.00元，商家优惠共0.00元",
            refunds: "#退款合计：0笔，商家实收退款共0.00元，商家优惠退款共0.00元")
        let summary = Self.summary(total: "合计,,3000,0,18000.00,18000.00,0.00,0.00,0.00,120.00,0.00,17880.00")
        let zip = Self.zip(detail: Self.gbk(detail), summary: Self.gbk(summary))
        #expect(Self.gbk(detail).count > 4 << 16)
        let bill = try AlipayTradeBill(zip: zip)
        #expect(
            bill.rows.count == 3000 && bill.rows.last?.line == 3005 && bill.rows.last?.outTradeNo == "OS20261125-3000")
        #expect(bill.totals.tradeReceiptFen == 1_800_000 && bill.totals.feeFen == 12_000)
    }

    @Test("what the sandbox Alipay charged and refunded reads back as its bill, through the gateway's download URL")
    func sandboxBill() async throws {
        let sandbox = try AlipayFixture.sandbox()
        for (number, fen) in [("OS-B1", Int64(9900)), ("OS-B2", Int64(600))] {
            try await sandbox.open(
                orderString: try AlipayFixture.orderString(number, fen: fen, notifyURL: "http://127.0.0.1:9/n"))
        }
        let client = AlipayGatewayClient(
            credentials: AlipayFixture.credentials, gatewayURL: "http://127.0.0.1/gateway.do",
            transport: HTTPClientAlipayTransport(transport: sandbox.transport),
            clock: FixedClock(date: AlipayFixture.now),
            sleep: { _ in })
        _ = try await client.refund(
            outTradeNo: "OS-B1", amount: Money(amountMinor: 9900, currency: .cny), outRequestNo: "RF-B1")
        let day = String(BeijingTime.string(AlipayFixture.now).prefix(10))
        // Alipay writes a day's bill the next morning: today's does not exist yet.
        #expect(try await client.billDownloadURL(billDate: day) == nil)
        await sandbox.publishBillsAtOnce(true)
        let url = try #require(try await client.billDownloadURL(billDate: day))
        #expect(url.contains("downloadFileName=20880000000000010156_"))
        let bill = try AlipayTradeBill(zip: try await client.downloadBill(url: url))
        #expect(bill.rows.count == 3 && bill.startDay == day && bill.account == "20880000000000010156")
        #expect(Set(bill.rows.filter { $0.kind == .trade }.map(\.orderFen)) == [9900, 600])
        let refund = try #require(bill.rows.first { $0.kind == .refund })
        #expect(refund.outTradeNo == "OS-B1" && refund.refundRequestNo == "RF-B1" && refund.receiptFen == -9900)
        // As a real bill writes a refund (RealSamples/README.md): 订单金额 negative.
        #expect(refund.orderFen == -9900)
        #expect(bill.totals.tradeReceiptFen == 10500 && bill.totals.refundReceiptFen == -9900)
        #expect(bill.totals.feeFen == 59 + 4 - 59)
        // The zip's names are GBK, as Alipay's are.
        let names = try ZipArchive(try await client.downloadBill(url: url)).entries
        #expect(names.allSatisfy { !$0.isUTF8Name })
    }

    static let zipOracle = Oracle(name: "alipay-official", script: "zip_oracle.py")

    @Test(
        "another writer's zip and GBK (Python's zipfile and codecs) read as a bill; Python reads the sandbox's zip, CRCs checked, names GBK",
        .enabled(if: zipOracle.isAvailable))
    func pythonInterop() async throws {
        let text = Self.detail().joined(separator: "\r\n") + "\r\n"
        let results = try await Self.zipOracle.run([
            ["op": "gbk", "text": text],
            ["op": "gbk", "text": Self.summary().joined(separator: "\r\n")],
        ])
        let detail = try #require((results[0] as? String).flatMap { Data(base64Encoded: $0) })
        #expect(Array(detail) == Self.gbk(Self.detail()))
        let summary = try #require((results[1] as? String).flatMap { Data(base64Encoded: $0) })
        let written = try await Self.zipOracle.run([
            [
                "op": "write",
                "files": [
                    ["2088_20261125_业务明细.csv", detail.base64EncodedString()],
                    ["2088_20261125_业务明细(汇总).csv", summary.base64EncodedString()],
                ],
            ]
        ])
        let zip = try #require((written[0] as? String).flatMap { Data(base64Encoded: $0) })
        let bill = try AlipayTradeBill(zip: Array(zip))
        #expect(bill.rows.count == 3 && bill.totals.tradeReceiptFen == 10500)
        let read = try await Self.zipOracle.run([["op": "read", "zip": Data(Self.zip()).base64EncodedString()]])
        let files = try #require(read[0] as? [[Any]])
        #expect(
            files.map { $0[0] as? String } == [
                "20880000000000010156_20261125_业务明细.csv", "20880000000000010156_20261125_业务明细(汇总).csv",
            ])
        #expect(files.allSatisfy { $0[1] as? Bool == false })
        #expect(
            files.first.flatMap { ($0[2] as? String).flatMap { Data(base64Encoded: $0) } }
                == Data(Self.gbk(Self.detail())))
    }

    @Test("a cut file, a footer or summary that does not add up, and a malformed row are refused naming the line")
    func refusals() throws {
        let detail = "20880000000000010156_20261125_业务明细.csv"
        let summary = "20880000000000010156_20261125_业务明细(汇总).csv"
        let cases: [(zip: [UInt8], error: AlipayBillError)] = [
            (
                Self.zip(detail: Self.gbk(Array(Self.detail().prefix(7)))),
                .truncated(file: detail, line: 7, "no 业务明细列表结束 marker")
            ),
            (
                Self.zip(detail: Self.gbk(Array(Self.detail().dropLast(2)))),
                .truncated(file: detail, line: 10, "no #退款合计 line")
            ),
            (
                Self.zip(detail: Self.gbk(Self.detail(trades: "#交易合计：3笔，商家实收共105.00元，商家优惠共0.00元"))),
                .totals(file: detail, line: 10, "交易合计 says 3 trades of 10500 fen; the rows hold 2 of 10500")
            ),
            (
                Self.zip(detail: Self.gbk(Self.detail(refunds: "#退款合计：1笔，商家实收退款共-98.00元，商家优惠退款共0.00元"))),
                .totals(file: detail, line: 11, "退款合计 says 1 refunds of -9800 fen; the rows hold 1 of -9900")
            ),
            (
                Self.zip(summary: Self.gbk(Self.summary(total: "合计,,2,1,105.00,6.00,0.00,0.00,0.00,0.05,0.00,5.95"))),
                .totals(
                    file: summary, line: 6,
                    "合计 says 2 trades, 1 refunds, 600 fen received, 5 fen of fees; the detail holds 2, 1, 600, 4")
            ),
            (
                Self.zip(summary: Self.gbk(Array(Self.summary().prefix(5)))),
                .truncated(file: summary, line: 5, "no 合计 row")
            ),
            (
                Self.zip(
                    detail: Self.gbk(Self.detail(rows: [Self.paid.replacingOccurrences(of: "交易\t", with: "冻结\t")]))),
                .malformed(file: detail, line: 6, "业务类型 '冻结'")
            ),
            (
                Self.zip(
                    detail: Self.gbk(
                        Self.detail(rows: [Self.paid.replacingOccurrences(of: ",99.00,99.00,", with: ",99.00,9.9.0,")]))
                ),
                .malformed(file: detail, line: 6, "商家实收（元） is not an amount in yuan")
            ),
            (
                Self.zip(detail: Self.gbk(Self.detail(rows: [String(Self.paidToo.dropLast())]))),
                .malformed(file: detail, line: 6, "24 fields for 25 columns")
            ),
            (
                Self.zip(
                    detail: Self.gbk(
                        Self.detail(rows: [Self.refunded.replacingOccurrences(of: ",-99.00,", with: ",99.00,")]))),
                .malformed(file: detail, line: 6, "a refund needs a negative 商家实收 and its request number")
            ),
            (
                Self.zip(detail: Self.gbk(Self.detail().map { $0.replacingOccurrences(of: "完成时间,", with: "完成日期,") })),
                .malformed(file: detail, line: 5, "the header has no column 完成时间")
            ),
            (Self.zip(detail: [0x23, 0xFF, 0xFF, 0x0A]), .encoding(file: detail)),
            (Self.zip(summary: nil), .files("no summary file (…_业务明细(汇总).csv)")),
            (Self.zip(extra: true), .files("two detail files (\(detail))")),
        ]
        for (zip, error) in cases {
            #expect(throws: error) { try AlipayTradeBill(zip: zip) }
        }
        // Read a line at a time, the detail parses whole before its CRC-32 is known: a wrong one still refuses it.
        var crc = Self.zip()
        let directory = Int(crc[crc.count - 6]) | Int(crc[crc.count - 5]) << 8 | Int(crc[crc.count - 4]) << 16
        crc[directory + 16] ^= 0xFF
        #expect(throws: AlipayBillError.archive(.checksumMismatch(detail))) { try AlipayTradeBill(zip: crc) }
        #expect(throws: AlipayBillError.self) { try AlipayTradeBill(zip: Array(Self.zip().prefix(100))) }
    }
}
