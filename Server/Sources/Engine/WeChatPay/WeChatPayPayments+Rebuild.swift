import Foundation
import Ledger
import OrderSafeModel
import WeChatPay

extension WeChatPayPayments {
    /// The order `transaction` paid: the ledger's, or — lost with a restored database — rebuilt from the
    /// transaction's `attach` when WeChat Pay says it was paid. Nil when neither.
    func order(paidBy transaction: WeChatPayTransaction, in write: any LedgerWrite) async throws -> Order? {
        if let order = try await write.order(number: transaction.outTradeNo) {
            return order.channel == .wechatPay ? order : nil
        }
        guard transaction.tradeState.isPaid else { return nil }
        if case .rebuilt(let order) = try await rebuild(from: transaction, in: write) { return order }
        return nil
    }

    /// Asks WeChat Pay about `orderNo` (`GET …/out-trade-no/{out_trade_no}`, the authority) and rebuilds its order
    /// from the answer's `attach` when it was paid to this merchant and app.
    public func rebuildOrder(_ orderNo: String) async throws -> OrderRebuild {
        guard case .transaction(let transaction) = try await client.queryTransaction(outTradeNo: orderNo) else {
            return .unrebuildable("WeChat Pay knows no order \(orderNo)")
        }
        guard transaction.tradeState.isPaid else {
            return .unrebuildable("WeChat Pay says \(orderNo) is \(transaction.tradeState.rawValue), not paid")
        }
        try transaction.check(
            appID: client.appID, merchantID: client.merchantID, outTradeNo: orderNo, amount: transaction.amount)
        return try await rebuild(from: transaction, in: context.ledger)
    }

    private func rebuild(from transaction: WeChatPayTransaction, in ledger: any OrderBook) async throws -> OrderRebuild
    {
        let paidAt = transaction.successTime.flatMap { ISO8601DateFormatter().date(from: $0) } ?? context.clock.now()
        return try await OrderRebuilder(context: context.with(ledger: ledger)).order(
            transaction.outTradeNo, channel: .wechatPay, provenance: transaction.attach, amount: transaction.amount,
            createdAt: paidAt)
    }
}
