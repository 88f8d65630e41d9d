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
            return .pending
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
                return .pending
            case .tradeClosed:
                return .closed(reason: "alipay: TRADE_CLOSED")
            }
        }
    }

    /// `alipay.trade.close` (a trade Alipay never saw needs no closing).
    public func close(_ order: Order) async throws {
        guard let gateway else { throw AlipayGatewayError.unavailable("no gateway client is configured") }
        _ = try await gateway.closeTrade(outTradeNo: order.orderNo)
    }
}
