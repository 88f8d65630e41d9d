import ChannelSupport
import Foundation
import Testing

@testable import WeChatPay

/// Bills WeChat Pay wrote for real merchants, as others published them (`RealSamples/README.md` names each source):
/// what production will download, not our reading of the format page.
@Suite("WeChat Pay trade bill: real bills others published")
struct WeChatPayRealBillTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("RealSamples")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// `bytes` as a real download is: CRLF line ends (and a byte-order mark first, when `bom`).
    static func downloaded(_ bytes: [UInt8], bom: Bool) -> [UInt8] {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        text = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        return (bom ? [0xEF, 0xBB, 0xBF] : []) + Array(text.utf8)
    }

    @Test("gunsluo/wechatpay-go's API v3 bill of 2021-01-28: five-decimal fees read exactly, the summary agrees")
    func apiV3Bill() throws {
        let raw = try Self.bytes("gunsluo-wechatpay-go-2021-01-28.csv")
        for variant in [raw, Self.downloaded(raw, bom: true)] {
            let bill = try WeChatPayTradeBill(variant)
            #expect(
                bill.rows.map(\.outTradeNo) == [
                    "S20210128170702357723", "S20210128153505214586", "S20210128165824499930",
                ])
            #expect(bill.rows.allSatisfy { $0.settlementFen == 1 && $0.feeFen == 0 && $0.state == "SUCCESS" })
            #expect(bill.totals == .init(count: 3, settlementFen: 3, refundFen: 0, feeFen: 0, orderFen: 3))
            // Read a row at a time as it inflates, as a day is.
            var rows = try WeChatPayTradeBill.Rows(
                try WeChatPayBillFile(bytes: Zlib.deflate(variant, wrapping: .gzip), gzip: true).lines())
            var count = 0
            while try rows.next() != nil { count += 1 }
            #expect(count == 3 && rows.totals == bill.totals)
        }
    }

    @Test("dromara/dax-pay's bill of 2024-01-16: a byte-order mark, a payment and two refund rows of it")
    func refunds() throws {
        let raw = try Self.bytes("dax-pay-2024-01-16.csv")
        #expect(raw.starts(with: [0xEF, 0xBB, 0xBF]))
        for variant in [raw, Self.downloaded(raw, bom: true)] {
            let bill = try WeChatPayTradeBill(variant)
            #expect(bill.rows.map(\.state) == ["SUCCESS", "REFUND", "REFUND"])
            #expect(bill.rows.map(\.outRefundNo) == [nil, "R1747268742516264960", "R1747275041228390400"])
            #expect(bill.rows.map(\.refundFen) == [0, 1, 1] && bill.rows.allSatisfy { $0.feeFen == 0 })
            #expect(bill.totals == .init(count: 3, settlementFen: 2, refundFen: 2, feeFen: 0, orderFen: 2))
        }
    }

    @Test(
        "fees as real bills write them (0.01000, -1.56000, 0.04000) are exact fen; one finer than the fen is refused saying so"
    )
    func fiveDecimalFees() throws {
        let raw = String(decoding: try Self.bytes("gunsluo-wechatpay-go-2021-01-28.csv"), as: UTF8.self)
        let feeRow = { (fee: String, total: String) -> [UInt8] in
            var lines = raw.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines[1] = lines[1].replacingOccurrences(of: "`0.00000,`1.00%", with: "`\(fee),`1.00%")
            lines[5] = lines[5].replacingOccurrences(of: "`0.00,`0.00000,", with: "`0.00,`\(total),")
            return Array(lines.joined(separator: "\n").utf8)
        }
        for (fee, fen) in [("0.01000", Int64(1)), ("-1.56000", -156), ("0.04000", 4), ("0.04", 4)] {
            let bill = try WeChatPayTradeBill(feeRow(fee, fee))
            #expect(bill.rows[0].feeFen == fen && bill.totals.feeFen == fen, "\(fee)")
        }
        #expect(
            throws: WeChatPayBillError.malformed(line: 2, "手续费 '0.05940' is finer than the fen, which the ledger keeps")
        ) {
            try WeChatPayTradeBill(feeRow("0.05940", "0.05940"))
        }
        #expect(throws: WeChatPayBillError.self) { try WeChatPayTradeBill(feeRow("0.000000", "0.000000")) }
        #expect(throws: WeChatPayBillError.self) { try WeChatPayTradeBill(feeRow("1e-2", "1e-2")) }
    }
}
