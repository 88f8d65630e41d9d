import Alipay
import Foundation
import Ledger
import OrderSafeModel

extension AlipayPayments: OrderRefunder {
    /// `alipay.trade.refund` of the whole trade; a repeat (same `out_request_no`) refunds nothing more.
    public func refund(_ order: Order, payment: RecordedPayment, reason: String?) async throws -> String {
        guard let gateway else { throw AlipayGatewayError.unavailable("no gateway client is configured") }
        let number = RefundService.requestNumber(order)
        let result = try await gateway.refund(outTradeNo: order.orderNo, amount: payment.amount, outRequestNo: number, reason: reason)
        guard result.refundFee == payment.amount else {
            throw AlipayGatewayError.malformedResponse("refund_fee \(result.refundFee) is not the paid \(payment.amount)")
        }
        return number
    }

    /// A notification reporting a refund: a full refund reverses the payment's grants once; a partial one is noted
    /// on the order for a human (what part of the goods it covers is the merchant's call).
    func applyRefund(_ notification: AlipayNotification, order: Order, inboxID: Int64) async throws {
        guard let refund = notification.refund else { return }
        guard refund.refundFee == notification.totalAmount else {
            try await ledger.note(
                orderNo: order.orderNo, kind: "partial_refund", cause: .notification,
                evidence: "alipay:\(notification.tradeNo) refunded \(refund.refundFee) of \(notification.totalAmount) inbox:\(inboxID)", at: clock.now())
            return
        }
        let outcome = try await ledger.reverse(
            Reversal(channel: .alipay, providerTransactionID: notification.tradeNo, kind: .refunded, cause: .notification, evidence: "inbox:\(inboxID)"),
            at: clock.now())
        logger.notice("alipay refund applied", metadata: ["order_no": "\(order.orderNo)", "outcome": "\(outcome)"])
    }
}
