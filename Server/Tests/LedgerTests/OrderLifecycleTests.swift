import Foundation
import Ledger
import OrderSafeModel
import Testing

/// The rules of an order's life, without a database.
@Suite("Order lifecycle rules")
struct OrderLifecycleTests {
    static let cny = CurrencyCode("CNY")!

    static func order(_ status: OrderStatus, amount: Int64 = 600, channel: Channel = .alipay) -> Order {
        Order(
            orderNo: "OS-1", orderUUID: UUID(), userID: "u", productID: "p", channel: channel, status: status,
            amount: Money(amountMinor: amount, currency: cny), createdAt: Date(timeIntervalSince1970: 0),
            updatedAt: Date(timeIntervalSince1970: 0))
    }

    static func payment(_ amount: Int64 = 600, channel: Channel = .alipay, currency: String = "CNY") -> VerifiedPayment
    {
        VerifiedPayment(
            channel: channel, providerTransactionID: "t", orderNo: "OS-1",
            amount: Money(amountMinor: amount, currency: CurrencyCode(currency)!), cause: .notification, evidence: "e")
    }

    @Test("a payment of the order's amount pays and fulfils an open order; a paid one is only fulfilled")
    func paysAndFulfils() {
        for status in [OrderStatus.created, .paying] {
            let plan = OrderLifecycle.paying(Self.order(status), with: Self.payment())
            #expect(plan.flag == nil && plan.status == .fulfilled)
            #expect(
                plan.steps.map(\.to) == [.paid, .fulfilled] && plan.steps.map(\.kind.rawValue) == ["paid", "fulfilled"])
        }
        let paid = OrderLifecycle.paying(Self.order(.paid), with: Self.payment())
        #expect(paid.steps.map(\.to) == [.fulfilled])
    }

    @Test("another amount or currency, a settled or cancelled order, another channel: flagged, nothing granted")
    func flags() {
        let cases: [(Order, VerifiedPayment, FlagReason)] = [
            (Self.order(.created), Self.payment(599), .amountMismatch),
            (Self.order(.created), Self.payment(600, currency: "USD"), .amountMismatch),
            (Self.order(.fulfilled), Self.payment(), .orderAlreadySettled),
            (Self.order(.refunded), Self.payment(), .orderAlreadySettled),
            (Self.order(.cancelled), Self.payment(), .orderAlreadySettled),
            (Self.order(.created), Self.payment(channel: .wechatPay), .orderAlreadySettled),
        ]
        for (order, payment, reason) in cases {
            let plan = OrderLifecycle.paying(order, with: payment)
            #expect(plan.flag == reason && plan.status == .flagged, "\(order.status) \(payment.amount)")
            #expect(plan.steps.map(\.kind) == [.flagged(reason)] && plan.steps.map(\.to) == [.flagged])
        }
    }

    @Test("a reversal refunds or revokes; one that leaves a balance below zero flags the order")
    func reversals() {
        #expect(OrderLifecycle.reversing(.refunded, leavesNegativeBalance: false) == (.status(.refunded), .refunded))
        #expect(OrderLifecycle.reversing(.revoked, leavesNegativeBalance: false) == (.status(.revoked), .revoked))
        for kind in [Reversal.Kind.refunded, .revoked] {
            #expect(
                OrderLifecycle.reversing(kind, leavesNegativeBalance: true) == (.flagged(.negativeBalance), .flagged))
        }
    }
}
