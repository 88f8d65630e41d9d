import Alipay
import Foundation
import Ledger
import OrderSafeModel

extension AlipayPayments {
    /// Asks Alipay about `orderNo` (`alipay.trade.query`, the authority) and rebuilds its order from the answer's
    /// `passback_params` when the trade was paid.
    public func rebuildOrder(_ orderNo: String) async throws -> OrderRebuild {
        guard let gateway else { return .unrebuildable("Alipay cannot be asked (no gateway configured)") }
        guard case .trade(let trade) = try await gateway.queryTrade(outTradeNo: orderNo), trade.outTradeNo == orderNo
        else {
            return .unrebuildable("Alipay knows no trade for \(orderNo)")
        }
        guard trade.status.isPaid || (trade.status == .tradeClosed && trade.paidAt != nil) else {
            return .unrebuildable("Alipay says \(orderNo) is \(trade.status.rawValue), not paid")
        }
        return try await OrderRebuilder(context: context.narrowed { $0 }).order(
            orderNo, channel: .alipay, provenance: trade.passbackParams, amount: trade.totalAmount,
            createdAt: trade.paidAt ?? context.clock.now())
    }
}
