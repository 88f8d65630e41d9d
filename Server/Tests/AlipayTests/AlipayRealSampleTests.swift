import ChannelSupport
import Foundation
import OrderSafeModel
import Sandbox
import Synchronization
import Testing

@testable import Alipay

/// What Alipay wrote for others, as they published it (`RealSamples/README.md` names each source and what was edited
/// there): a merchant's trade bill and the gateway's answers, read by the code that reads production's.
@Suite("Alipay: a real trade bill and real gateway answers others published")
struct AlipayRealSampleTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "RealSamples")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// The bill's 汇总 file, which the source did not publish: built here from the detail's own footer (6 trades and 4
    /// refunds of 0.01, nothing of fees), in the layout the sandbox writes.
    static let summary = [
        "#支付宝业务汇总查询", "#账号：[20880211096256330156]", "#" + String(repeating: "-", count: 41) + "业务汇总列表",
        SandboxAlipay.billSummaryHeader, "alipay_store,alipay_store,5,4,0.05,0.01,0.00,0.00,0.00,0.00,0.00,0.01",
        ",,1,0,0.01,0.01,0.00,0.00,0.00,0.00,0.00,0.01", "合计,,6,4,0.06,0.02,0.00,0.00,0.00,0.00,0.00,0.02",
        "#" + String(repeating: "-", count: 41) + "业务汇总列表结束",
    ].joined(separator: "\n")

    /// `text` as Alipay's download holds it: GBK, CRLF, in the zip with GBK names.
    static func downloaded(_ text: [UInt8]) -> [UInt8] {
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        return AlipayTradeBillTests.zip(
            detail: AlipayTradeBillTests.gbk(Array(lines.dropLast(lines.last == "" ? 1 : 0))),
            summary: AlipayTradeBillTests.gbk(summary.components(separatedBy: "\n")))
    }

    @Test("a merchant's bill of 2019-09-16: six payments and four refunds, each refund's 订单金额 negative, read exactly")
    func tradeBill() throws {
        let detail = try Self.bytes("qding-2019-09-16-detail.csv")
        for bill in [
            try AlipayTradeBill(detail: detail, summary: Array(Self.summary.utf8)),
            try AlipayTradeBill(zip: Self.downloaded(detail)),
        ] {
            #expect(bill.account == "20880211096256330156" && bill.startDay == "2019-09-16")
            #expect(
                bill.rows.map(\.kind) == [
                    .trade, .refund, .trade, .refund, .trade, .refund, .trade, .refund, .trade, .trade,
                ])
            let refunds = bill.rows.filter { $0.kind == .refund }
            // The refund rows write 订单金额 as the real bill does: negative, like 商家实收.
            #expect(refunds.allSatisfy { $0.orderFen == -1 && $0.receiptFen == -1 && $0.feeFen == 0 })
            #expect(
                refunds.map(\.refundRequestNo) == [
                    "re_test_1568602607356", "re_test_1568604414433", "re_test_1568614511552",
                    "re_20190916150216125q8Lmiodp",
                ])
            #expect(
                refunds[0].tradeNo == "2019091622001458860515315453" && refunds[0].outTradeNo == "service_1568601259302"
            )
            #expect(refunds[0].finishedAt == BeijingTime.date("2019-09-16 10:56:48"))
            let payment = bill.rows[8]
            #expect(
                payment.outTradeNo == "20190916165659224L3VUQRL9" && payment.orderFen == 1 && payment.receiptFen == 1)
            #expect(payment.line == 14 && payment.refundRequestNo.isEmpty)
            #expect(
                bill.totals == .init(tradeCount: 6, tradeReceiptFen: 6, refundCount: 4, refundReceiptFen: -4, feeFen: 0)
            )
        }
    }

    @Test("the same bill with a row it does not add up to, or a 业务类型 it does not know, is refused naming the line")
    func tradeBillEdited() throws {
        let text = String(decoding: try Self.bytes("qding-2019-09-16-detail.csv"), as: UTF8.self)
        let extraPayment = text.replacingOccurrences(of: "#交易合计：6笔", with: "#交易合计：7笔")
        #expect(throws: AlipayBillError.self) {
            try AlipayTradeBill(detail: Array(extraPayment.utf8), summary: Array(Self.summary.utf8))
        }
        // Only 交易 and 退款 are read; another kind of row (分账, 冻结 …) would move money we do not model, so the
        // day is refused with the row named rather than half read.
        let royalty = text.replacingOccurrences(
            of: "qd_201909161844073417CB0wPzR\t,交易\t", with: "qd_201909161844073417CB0wPzR\t,分账\t")
        #expect(throws: AlipayBillError.malformed(file: "业务明细", line: 15, "业务类型 '分账'")) {
            try AlipayTradeBill(detail: Array(royalty.utf8), summary: Array(Self.summary.utf8))
        }
    }

    /// A gateway that answers every call with `body`.
    final class Answering: AlipayTransport {
        let body: [UInt8]
        init(_ body: [UInt8]) { self.body = body }
        func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
            (200, body)
        }
        func get(url: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) { (200, body) }
    }

    static func client(answering body: [UInt8]) -> AlipayGatewayClient {
        AlipayGatewayClient(
            credentials: AlipayFixture.credentials, transport: Answering(body),
            retry: .init(attempts: 1, firstDelay: .milliseconds(1), timeout: .seconds(1)),
            clock: FixedClock(date: AlipayFixture.now), sleep: { _ in })
    }

    /// `answer` with its redacted `"sign": ""` replaced by a signature over the method's member as written (the
    /// sandbox's key standing in for Alipay's: the published signature was removed).
    static func signed(_ answer: [UInt8], member: String) throws -> [UInt8] {
        let raw = try #require(try RawJSONMembers.extract(answer)[member])
        let signature = try AlipayFixture.alipaySigner.sign(String(decoding: raw, as: UTF8.self))
        let text = String(decoding: answer, as: UTF8.self)
        return Array(text.replacingOccurrences(of: #""sign": """#, with: #""sign": "\#(signature)""#).utf8)
    }

    @Test("a real trade query answer: refused while its signature is the redacted empty one; signed, read to the fen")
    func tradeQuery() async throws {
        let answer = try Self.bytes("python-alipay-sdk-3.4.0-trade-query.json")
        await #expect(throws: AlipayGatewayError.badSignature) {
            try await Self.client(answering: answer).queryTrade(outTradeNo: "out_trade_no15")
        }
        let result = try await Self.client(answering: try Self.signed(answer, member: "alipay_trade_query_response"))
            .queryTrade(outTradeNo: "out_trade_no15")
        #expect(
            result
                == .trade(
                    AlipayTrade(
                        tradeNo: "2017032121001004070200176844", outTradeNo: "out_trade_no15", status: .tradeSuccess,
                        totalAmount: Money(amountMinor: 2000, currency: .cny), buyerID: "2088102169481075",
                        paidAt: BeijingTime.date("2017-03-21 13:29:17"))))
    }

    @Test(
        "real refusals, unsigned or with an empty sign, under the method's name or error_response, end as Alipay's codes",
        arguments: [
            ("python-alipay-sdk-3.4.0-invalid-app-id.json", "alipay.trade.query", "40002", "isv.invalid-app-id"),
            ("python-alipay-sdk-3.4.0-error-response.json", "alipay.trade.query", "40002", "isv.code-invalid"),
            ("python-alipay-sdk-3.4.0-trade-pay-failed.json", "alipay.trade.pay", "40004", "ACQ.INVALID_PARAMETER"),
            (
                "python-alipay-sdk-3.4.0-trade-precreate-failed.json", "alipay.trade.precreate", "40004",
                "ACQ.TOTAL_FEE_EXCEED"
            ),
        ])
    func refusals(file: String, method: String, code: String, subCode: String) throws {
        let response = try AlipayGatewayResponse.verified(
            body: try Self.bytes(file), method: method, credentials: AlipayFixture.credentials)
        #expect(!response.isSuccess && response.code == code && response.subCode == subCode)
        // The same answer claiming success without a signature is not believed.
        let claimed = String(decoding: try Self.bytes(file), as: UTF8.self)
            .replacingOccurrences(of: #""code": "\#(code)""#, with: #""code": "10000""#)
        #expect(throws: AlipayGatewayError.badSignature) {
            try AlipayGatewayResponse.verified(
                body: Array(claimed.utf8), method: method, credentials: AlipayFixture.credentials)
        }
    }
}
