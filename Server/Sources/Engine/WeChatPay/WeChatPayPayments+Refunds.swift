import Foundation
import Ledger
import OrderSafeModel
import WeChatPay

extension WeChatPayPayments: OrderRefunder {
    /// `POST /v3/refund/domestic/refunds` of the whole payment; accepted when WeChat Pay answers SUCCESS or
    /// PROCESSING (its `REFUND.SUCCESS` notification follows and finds the payment already reversed).
    public func refund(_ order: Order, payment: RecordedPayment, reason: String?) async throws -> String {
        let refund = try await client.refund(
            WeChatPayRefundRequest(
                outTradeNo: order.orderNo, outRefundNo: RefundService.requestNumber(order), refund: payment.amount,
                total: payment.amount,
                reason: reason, notifyURL: notifyURL))
        guard refund.status == .success || refund.status == .processing else {
            throw WeChatPayAPIError.business(
                status: 200, code: refund.status.rawValue, message: "the refund was not accepted")
        }
        return refund.refundID
    }

    /// `REFUND.SUCCESS`: a full refund reverses the payment's grants once; a partial one is noted for a human.
    func applyRefund(_ resource: [UInt8], inboxID: Int64, in write: any LedgerWrite) async throws {
        let refund: WeChatPayRefund
        do {
            refund = try WeChatPayRefund(resource: resource)
        } catch {
            throw Refusal(status: 400, message: error.description)
        }
        guard refund.merchantID == nil || refund.merchantID == client.merchantID else {
            throw Refusal(status: 400, message: "the refund is for merchant \(refund.merchantID ?? "-"), not ours")
        }
        guard refund.status == .success else { return }
        guard
            let recorded = try await write.payment(
                channel: .wechatPay, providerTransactionID: refund.transactionID)
        else {
            // A full refund of a payment not recorded yet waits in the ledger and wins when the payment is recorded.
            guard refund.refundFen == refund.totalFen else {
                throw Refusal(status: 404, message: "no payment \(refund.transactionID) yet")
            }
            let outcome = try await write.reverse(
                Reversal(
                    channel: .wechatPay, providerTransactionID: refund.transactionID, kind: .refunded,
                    cause: .notification,
                    evidence: "inbox:\(inboxID)"),
                at: context.clock.now())
            context.logger.notice(
                "wechatpay refund before its payment",
                metadata: ["transaction_id": "\(refund.transactionID)", "outcome": "\(outcome)"])
            return
        }
        let outcome = try await ReportedRefund(
            channel: .wechatPay, providerTransactionID: refund.transactionID, orderNo: recorded.orderNo,
            refundedMinor: refund.refundFen,
            totalMinor: refund.totalFen, evidence: "inbox:\(inboxID)"
        ).apply(to: write, at: context.clock.now())
        context.logger.notice(
            "wechatpay refund notification applied",
            metadata: ["order_no": "\(recorded.orderNo)", "outcome": "\(outcome.map { "\($0)" } ?? "partial")"])
    }
}
