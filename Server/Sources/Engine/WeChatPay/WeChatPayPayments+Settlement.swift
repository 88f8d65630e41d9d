import Foundation
import Ledger
import OrderSafeModel
import WeChatPay

extension WeChatPayPayments: OrderSettler {
    /// `GET /v3/pay/transactions/out-trade-no/{out_trade_no}`: a paid transaction is recorded exactly as its
    /// notification would be (app, merchant checked; the amount by the ledger).
    public func settle(_ order: Order, cause: EventCause) async throws -> SettlementState {
        switch try await client.queryTransaction(outTradeNo: order.orderNo) {
        case .notFound:
            return .unpaid
        case .transaction(let transaction):
            switch transaction.tradeState {
            case .success, .refund:
                try transaction.check(
                    appID: client.appID, merchantID: client.merchantID, outTradeNo: order.orderNo,
                    amount: transaction.amount)
                guard let transactionID = transaction.transactionID else { return .pending }
                let outcome = try await context.ledger.fulfil(
                    VerifiedPayment(
                        channel: .wechatPay, providerTransactionID: transactionID, orderNo: order.orderNo,
                        amount: transaction.amount,
                        cause: cause, evidence: "wechatpay.query", sandbox: sandbox),
                    at: context.clock.now())
                context.log(outcome, "wechatpay transaction settled by query", ["order_no": "\(order.orderNo)"])
                return .paid
            case .notPay:
                return .unpaid
            case .userPaying, .accept:
                return .pending
            case .closed, .revoked, .payError:
                return .closed(reason: "wechatpay: \(transaction.tradeState.rawValue)")
            }
        }
    }

    /// `POST …/close` (WeChat Pay accepts closing an order it never saw).
    public func close(_ order: Order) async throws {
        try await client.closeTransaction(outTradeNo: order.orderNo)
    }
}
