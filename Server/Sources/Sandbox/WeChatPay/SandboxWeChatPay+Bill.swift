import Foundation
import WeChatPay

extension SandboxWeChatPay {
    /// The detail header of WeChat Pay's trade bill, every column as the format page lists it.
    public static let billHeader =
        "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注"
    /// The summary header of WeChat Pay's trade bill.
    public static let billSummaryHeader = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"

    /// The ALL trade bill of `date` (`yyyy-MM-dd`, Beijing) in WeChat Pay's format: a row for each payment whose
    /// success time, and each refund whose acceptance time, falls on that day, from what this sandbox charged and
    /// refunded (fees included), then the summary, in the bytes real bills have (a BOM, CRLF, five-decimal fees)
    /// (https://pay.weixin.qq.com/docs/merchant/products/bill-download/format-trade.html); nil for a day without one.
    func bill(date: String) -> [UInt8]? {
        struct Line {
            var time: String
            var fields: [String]
            var settlement: Int64, refund: Int64, fee: Int64, order: Int64, requested: Int64
        }
        var lines: [Line] = []
        for trade in trades.values {
            // Commas would shift the columns: WeChat Pay's files do not quote, so names are written with full-width ones.
            let name = trade.description.replacingOccurrences(of: ",", with: "，")
            let attach = (trade.attach ?? "").replacingOccurrences(of: ",", with: "，")
            let common = { (time: String, state: String) -> [String] in
                [
                    time, trade.appID, self.merchantID, "0", "", trade.transactionID, trade.outTradeNo, "oSandboxPayer",
                    "APP", state, "OTHERS", trade.amount.currency.code,
                ]
            }
            if let paid = trade.successTime.map(Self.billTime), paid.hasPrefix(date) {
                let order = trade.amount.amountMinor
                lines.append(
                    Line(
                        time: paid,
                        fields: common(paid, "SUCCESS")
                            + [
                                BillYuan.string(order), "0.00", "0", "0", "0.00", "0.00", "", "", name, attach,
                                BillYuan.string(BillYuan.fee(order), decimals: 5), "0.60%", BillYuan.string(order),
                                "0.00", "",
                            ],
                        settlement: order, refund: 0, fee: BillYuan.fee(order), order: order, requested: 0))
            }
            for (outRefundNo, refund) in trade.refunds {
                guard let time = refund.time.map(Self.billTime), time.hasPrefix(date) else { continue }
                lines.append(
                    Line(
                        time: time,
                        fields: common(time, "REFUND")
                            + [
                                "0.00", "0.00", refund.refundID, outRefundNo, BillYuan.string(refund.fen), "0.00",
                                "ORIGINAL",
                                "SUCCESS", name, attach, BillYuan.string(-BillYuan.fee(refund.fen), decimals: 5),
                                "0.60%", "0.00",
                                BillYuan.string(refund.fen), "",
                            ],
                        settlement: 0, refund: refund.fen, fee: -BillYuan.fee(refund.fen), order: 0,
                        requested: refund.fen))
            }
        }
        guard !lines.isEmpty else { return nil }
        lines.sort { ($0.time, $0.fields[6], $0.fields[14]) < ($1.time, $1.fields[6], $1.fields[14]) }
        // As WeChat Pay writes it: a byte-order mark first, CRLF line ends, fees with five decimals (every published
        // bill; the digest is over these bytes).
        var text = "\u{FEFF}" + Self.billHeader + "\r\n"
        for line in lines { text += line.fields.map { "`" + $0 }.joined(separator: ",") + "\r\n" }
        let sum = { (value: KeyPath<Line, Int64>) in lines.reduce(Int64(0)) { $0 + $1[keyPath: value] } }
        text += Self.billSummaryHeader + "\r\n"
        text +=
            [
                String(lines.count), BillYuan.string(sum(\.settlement)), BillYuan.string(sum(\.refund)), "0.00",
                BillYuan.string(sum(\.fee), decimals: 5),
                BillYuan.string(sum(\.order)), BillYuan.string(sum(\.requested)),
            ].map { "`" + $0 }.joined(separator: ",") + "\r\n"
        return Array(text.utf8)
    }

    /// `2026-11-25T10:01:02+08:00` → `2026-11-25 10:01:02`.
    static func billTime(_ rfc3339: String) -> String {
        String(rfc3339.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }
}
