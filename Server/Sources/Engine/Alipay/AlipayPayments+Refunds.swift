import Alipay
import Foundation
import Ledger
import OrderSafeModel

extension AlipayPayments: OrderRefunder {
    /// `alipay.trade.refund` of the whole trade; a repeat (same `out_request_no`) refunds nothing more.
    public func refund(_ order: Order, payment: RecordedPayment, reason: String?) async throws -> String {
        guard let gateway else { throw AlipayGatewayError.unavailable("no gateway client is configured") }
        let number = RefundService.requestNumber(order)
        let result = try await gateway.refund(
            outTradeNo: order.orderNo, amount: payment.amount, outRequestNo: number, reason: reason)
        guard result.refundFee == payment.amount else {
            throw AlipayGatewayError.malformedResponse(
                "refund_fee \(result.refundFee) is not the paid \(payment.amount)")
        }
        return number
    }

    /// A notification reporting a refund (`refund_fee` is the total refunded so far).
    func applyRefund(_ notification: AlipayNotification, order: Order, inboxID: Int64, in write: any LedgerWrite)
        async throws
    {
        guard let refund = notification.refund else { return }
        let outcome = try await ReportedRefund(
            channel: .alipay, providerTransactionID: notification.tradeNo, orderNo: order.orderNo,
            refundedMinor: refund.refundFee.amountMinor, totalMinor: notification.totalAmount.amountMinor,
            evidence: "inbox:\(inboxID)"
        ).apply(to: write, at: context.clock.now())
        context.logger.notice(
            "alipay refund notification applied",
            metadata: ["order_no": "\(order.orderNo)", "outcome": "\(outcome.map { "\($0)" } ?? "partial")"])
    }
}
