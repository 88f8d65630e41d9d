import Alipay
import Foundation
import Ledger
import OrderSafeModel

extension AlipayPayments: OrderSettler {
    /// `alipay.trade.query`: a paid trade is recorded (amount checked by the ledger), a closed one reported.
    public func settle(_ order: Order, cause: EventCause) async throws -> SettlementState {
        guard let gateway else { throw AlipayGatewayError.unavailable("no gateway client is configured") }
        switch try await gateway.queryTrade(outTradeNo: order.orderNo) {
        case .notFound:
            return .unpaid
        case .trade(let trade):
            switch trade.status {
            case .tradeSuccess, .tradeFinished:
                let outcome = try await context.ledger.fulfil(
                    VerifiedPayment(
                        channel: .alipay, providerTransactionID: trade.tradeNo, orderNo: order.orderNo,
                        amount: trade.totalAmount, cause: cause,
                        evidence: "alipay.trade.query", sandbox: sandbox),
                    at: context.clock.now())
                context.log(outcome, "alipay trade settled by query", ["order_no": "\(order.orderNo)"])
                return .paid
            case .waitBuyerPay:
                return .unpaid
            case .tradeClosed where trade.paidAt != nil:
                // TRADE_CLOSED is also a trade paid and then refunded in full (Alipay's trade_status: "未付款交易超时
                // 关闭，或支付完成后全额退款"); its send_pay_date tells them apart. Recorded as paid and reversed at once.
                try await recordRefundedInFull(trade, order: order, cause: cause)
                return .paid
            case .tradeClosed:
                return .closed(reason: "alipay: TRADE_CLOSED")
            }
        }
    }

    /// A trade paid and refunded in full before anyone heard of it: its payment, then its reversal, each exactly once.
    private func recordRefundedInFull(_ trade: AlipayTrade, order: Order, cause: EventCause) async throws {
        let evidence = "alipay.trade.query: TRADE_CLOSED after payment"
        let outcome = try await context.ledger.fulfil(
            VerifiedPayment(
                channel: .alipay, providerTransactionID: trade.tradeNo, orderNo: order.orderNo,
                amount: trade.totalAmount, cause: cause, evidence: evidence, sandbox: sandbox),
            at: context.clock.now())
        context.log(outcome, "alipay trade settled by query, refunded in full", ["order_no": "\(order.orderNo)"])
        _ = try await ReportedRefund(
            channel: .alipay, providerTransactionID: trade.tradeNo, orderNo: order.orderNo,
            refundedMinor: trade.totalAmount.amountMinor, totalMinor: trade.totalAmount.amountMinor,
            evidence: evidence, cause: cause
        ).apply(to: context.ledger, at: context.clock.now())
    }

    /// `alipay.trade.close` (a trade Alipay never saw needs no closing).
    public func close(_ order: Order) async throws {
        guard let gateway else { throw AlipayGatewayError.unavailable("no gateway client is configured") }
        _ = try await gateway.closeTrade(outTradeNo: order.orderNo)
    }
}
