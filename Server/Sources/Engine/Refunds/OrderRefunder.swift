import Foundation
import Ledger
import OrderSafeModel

/// A channel through which the merchant can refund (Alipay, WeChat Pay; App Store refunds are Apple's).
public protocol OrderRefunder: Sendable {
    /// Asks the provider to refund the whole payment; idempotent per order (the refund request number is derived
    /// from the order number). Returns the provider's refund reference once it accepted the refund.
    func refund(_ order: Order, payment: RecordedPayment, reason: String?) async throws -> String
}

/// Why a merchant refund could not be made.
public enum RefundError: Error, Equatable, CustomStringConvertible {
    case orderNotFound(String)
    /// The order's channel has no merchant refunds (the App Store).
    case notRefundable(String)
    /// No live payment is recorded for the order.
    case notPaid(String)
    /// The provider refused or could not be reached.
    case provider(String)

    public var code: String {
        switch self {
        case .orderNotFound: "order_not_found"
        case .notRefundable: "not_refundable"
        case .notPaid: "order_not_paid"
        case .provider: "provider_error"
        }
    }

    public var description: String {
        switch self {
        case .orderNotFound(let orderNo): "no order '\(orderNo)'"
        case .notRefundable(let reason): reason
        case .notPaid(let orderNo): "order '\(orderNo)' has no payment to refund"
        case .provider(let detail): "the provider did not refund: \(detail)"
        }
    }
}

/// Merchant-initiated refunds: the provider refunds first, then the ledger takes back exactly what the payment
/// granted, once (a repeat finds the payment reversed and changes nothing).
public struct RefundService: Sendable {
    let ledger: any OrderBook
    let refunders: [Channel: any OrderRefunder]
    let clock: any WallClock

    /// Whether the merchant refunds `channel`'s orders through this service (App Store refunds are Apple's).
    public func refunds(_ channel: Channel) -> Bool { refunders[channel] != nil }

    public init(ledger: any OrderBook, refunders: [Channel: any OrderRefunder], clock: any WallClock) {
        self.ledger = ledger
        self.refunders = refunders
        self.clock = clock
    }

    /// Refunds the order's live payment in full; `operatorName` (the console's signed-in operator) is named in the
    /// reversal's evidence.
    public func refund(orderNo: String, reason: String?, operatorName: String? = nil) async throws -> (
        Order, ReversalOutcome
    ) {
        guard let order = try await ledger.order(number: orderNo) else { throw RefundError.orderNotFound(orderNo) }
        guard let refunder = refunders[order.channel] else {
            throw RefundError.notRefundable(
                "\(order.channel.rawValue) orders are refunded by the provider, not the merchant")
        }
        let payments = try await ledger.payments(orderNo: orderNo)
        if let reversed = payments.first(where: { $0.reversedAt != nil }),
            !payments.contains(where: { $0.reversedAt == nil })
        {
            return (order, .alreadyReversed(orderNo: reversed.orderNo))
        }
        guard let payment = payments.first(where: { $0.reversedAt == nil }) else { throw RefundError.notPaid(orderNo) }
        let reference: String
        do {
            reference = try await refunder.refund(order, payment: payment, reason: reason)
        } catch {
            throw RefundError.provider("\(error)")
        }
        let evidence = "refund:\(reference)" + (operatorName.map { " operator:\($0)" } ?? "")
        let outcome = try await ledger.reverse(
            Reversal(
                channel: payment.channel, providerTransactionID: payment.providerTransactionID, kind: .refunded,
                cause: .admin, evidence: evidence),
            at: clock.now())
        guard case .alreadyReversed = outcome else {
            return (try await ledger.order(number: orderNo) ?? order, outcome)
        }
        // Reversed between the look above and now: by the provider's notification of this very refund (one refund
        // per order: its request number is the order's), which can overtake the provider's answer, or by the same
        // request from another replica. The refund asked for was made: the answer says so, and the order's history
        // names who asked.
        try await ledger.note(
            orderNo: orderNo, kind: .refundRequested, cause: .admin, evidence: evidence, at: clock.now())
        let refunded = try await ledger.order(number: orderNo) ?? order
        return (refunded, .reversed(refunded))
    }

    /// The refund request number of an order (`out_request_no` / `out_refund_no`): one full refund per order.
    public static func requestNumber(_ order: Order) -> String { "RF" + order.orderNo }
}
