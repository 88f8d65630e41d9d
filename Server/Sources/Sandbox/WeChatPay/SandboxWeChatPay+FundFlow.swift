import Foundation
import WeChatPay

extension SandboxWeChatPay {
    /// The download token's prefix that names a fund-flow bill (a trade bill's token is its date alone).
    static let fundFlowToken = "fundflow-"
    /// Marks a download asked for with `tar_type=GZIP`: the file is served gzipped (its digest is the bill's own).
    static let gzipToken = "gzip-"

    /// The fund-flow bill's detail header and summary header, as merchants receive them.
    public static let fundFlowHeader =
        "记账时间,微信支付业务单号,资金流水单号,业务名称,业务类型,收支类型,收支金额(元),账户结余(元),资金变更提交申请人,备注,业务凭证号"
    public static let fundFlowSummaryHeader = "资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额"

    /// The BASIC account's fund-flow bill of `date` (`yyyy-MM-dd`, Beijing) in WeChat Pay's format, from what this
    /// sandbox charged and refunded: each payment credited (业务名称 交易, 业务类型 交易, 收入) and its fee taken (交易,
    /// 扣除交易手续费, 支出) at its success time, each refund's returned fee (退款, 退还交易手续费, 收入) and the refund
    /// paid out (退款, 退款, 支出) at its acceptance time — the names and types the format page lists
    /// (https://pay.weixin.qq.com/docs/merchant/products/bill-download/format-fundflow.html); the balance is the
    /// account's, every movement since the sandbox began. Nil for a day without a movement.
    func fundFlowBill(date: String) -> [UInt8]? {
        struct Movement {
            var time: String
            var businessID: String
            var flow: String
            var name: String
            var type: String
            var income: Bool
            var fen: Int64
        }
        var movements: [Movement] = []
        for trade in trades.values {
            if let paid = trade.successTime.map(Self.billTime) {
                let fen = trade.amount.amountMinor
                movements.append(
                    Movement(
                        time: paid, businessID: trade.transactionID, flow: trade.transactionID + "01", name: "交易",
                        type: "交易", income: true, fen: fen))
                movements.append(
                    Movement(
                        time: paid, businessID: trade.transactionID, flow: trade.transactionID + "02",
                        name: "交易", type: "扣除交易手续费", income: false, fen: BillYuan.fee(fen)))
            }
            for refund in trade.refunds.values {
                guard let time = refund.time.map(Self.billTime) else { continue }
                // The fee comes back first, so that a full refund of the day's only payment leaves the account at 0.
                movements.append(
                    Movement(
                        time: time, businessID: refund.refundID, flow: refund.refundID + "01", name: "退款",
                        type: "退还交易手续费", income: true, fen: BillYuan.fee(refund.fen)))
                movements.append(
                    Movement(
                        time: time, businessID: refund.refundID, flow: refund.refundID + "02", name: "退款",
                        type: "退款", income: false, fen: refund.fen))
            }
        }
        movements.sort { ($0.time, $0.flow) < ($1.time, $1.flow) }
        var balance: Int64 = 0
        var lines: [(movement: Movement, balance: Int64)] = []
        for movement in movements {
            balance += movement.income ? movement.fen : -movement.fen
            if movement.time.hasPrefix(date) { lines.append((movement, balance)) }
        }
        guard !lines.isEmpty else { return nil }
        var text = Self.fundFlowHeader + "\r\n"
        for (movement, balance) in lines {
            let fields = [
                movement.time, movement.businessID, movement.flow, movement.name, movement.type,
                movement.income ? "收入" : "支出", BillYuan.string(movement.fen), BillYuan.string(balance),
                merchantID + "API", "",
                "S" + movement.flow,
            ]
            text += fields.map { "`" + $0 }.joined(separator: ",") + "\r\n"
        }
        movements = lines.map(\.movement)
        let incomes = movements.filter(\.income)
        let expenses = movements.filter { !$0.income }
        text += Self.fundFlowSummaryHeader + "\r\n"
        text +=
            [
                String(movements.count), String(incomes.count), BillYuan.string(incomes.reduce(0) { $0 + $1.fen }),
                String(expenses.count), BillYuan.string(expenses.reduce(0) { $0 + $1.fen }),
            ].map { "`" + $0 }.joined(separator: ",") + "\r\n"
        return Array(text.utf8)
    }
}
