import OrderSafeModel

/// The rules of an order's life, apart from the SQL that stores it: what a payment does to its order, and what a
/// reversal does. Pure: tested without a database (`OrderLifecycleTests`).
public enum OrderLifecycle {
    /// What paying `order` with `payment` does to it: flags it when the amount differs (unless the provider sets
    /// the price: then the order takes the payment's amount), or when the order was settled already or belongs to
    /// another channel (its grants are not given: a human looks); otherwise pays and fulfils it (an order paid
    /// already is only fulfilled).
    public static func paying(_ order: Order, with payment: VerifiedPayment) -> PaymentPlan {
        let flag: FlagReason? =
            if payment.amount != order.amount, !payment.pricedByProvider {
                .amountMismatch
            } else if order.status.isFinal || payment.channel != order.channel { .orderAlreadySettled } else { nil }
        if let flag {
            return PaymentPlan(flag: flag, steps: [(.flagged(flag), .flagged)], status: .flagged, amount: nil)
        }
        return PaymentPlan(
            flag: nil,
            steps: (order.status == .paid ? [] : [(.status(.paid), .paid)]) + [(.status(.fulfilled), .fulfilled)],
            status: .fulfilled, amount: payment.amount == order.amount ? nil : payment.amount)
    }

    /// The step a reversal moves its order through: refunded or revoked, or flagged when taking the grants back left
    /// a balance below zero (the user had spent what was refunded: a human decides).
    public static func reversing(_ kind: Reversal.Kind, leavesNegativeBalance: Bool) -> (
        kind: OrderEventKind, to: OrderStatus
    ) {
        if leavesNegativeBalance { return (.flagged(.negativeBalance), .flagged) }
        let status: OrderStatus = kind == .refunded ? .refunded : .revoked
        return (.status(status), status)
    }
}

/// What a payment does to its order: the steps it moves it through to `status`, and why it is not granted if flagged.
public struct PaymentPlan: Sendable {
    public var flag: FlagReason?
    public var steps: [(kind: OrderEventKind, to: OrderStatus)]
    public var status: OrderStatus
    /// The order's new amount: what the provider charged, when it set a price other than the order's.
    public var amount: Money?

    /// `order` as the plan leaves its amount.
    public func priced(_ order: Order) -> Order {
        var order = order
        if let amount { order.amount = amount }
        return order
    }
}
