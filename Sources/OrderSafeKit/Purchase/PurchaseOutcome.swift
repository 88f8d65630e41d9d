import Foundation
import OrderSafeModel

/// Where a purchase ended, or where it waits.
public struct PurchaseOutcome: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// The server recorded the payment and granted the product.
        case fulfilled
        /// Ask to Buy: it completes by itself once approved (through the transaction listener, even after a relaunch).
        case pending
        case cancelled
        /// The store or provider may have taken the money, but the server has not confirmed it yet (offline, server
        /// busy, provider slow). Nothing is lost: it is kept in the journal and completed by ``OrderSafe/resume()``.
        case awaitingConfirmation
        /// The provider, asked twice by the server, says the order is not paid (the buyer backed out of Alipay or WeChat
        /// Pay, or came back before paying). The order stays open until it expires: a payment made after all is still
        /// credited and reported (``OrderSafe/resume()``).
        case notPaid
        /// Paid, then refunded or revoked.
        case refunded
        /// Paid, but held for review on the server (e.g. an amount mismatch).
        case underReview
        case failed(OrderSafeError)
    }

    public var orderNo: String?
    public var productID: String
    public var channel: Channel
    public var state: State
    /// The order as the server last reported it.
    public var order: Order?
    /// The user whose purchase it is; nil when this device holds no order of it (a transaction the store delivered
    /// on its own). Events carry an outcome only while its user is signed in.
    public internal(set) var userID: String?
    /// For ``State/awaitingConfirmation``: the store charged, or may have (its message says so); otherwise it is not
    /// known that anything was paid.
    public internal(set) var storeMayHaveCharged = false

    /// A stable name for the state: `fulfilled`, `pending`, `cancelled`, `awaiting_confirmation`, `not_paid`,
    /// `refunded`, `under_review`, `failed`.
    public var name: String {
        switch state {
        case .fulfilled: "fulfilled"
        case .pending: "pending"
        case .cancelled: "cancelled"
        case .awaitingConfirmation: "awaiting_confirmation"
        case .notPaid: "not_paid"
        case .refunded: "refunded"
        case .underReview: "under_review"
        case .failed: "failed"
        }
    }

    /// Whether the purchase is over (nothing of it is left in the journal).
    public var isFinal: Bool {
        switch state {
        case .pending, .awaitingConfirmation, .notPaid: false
        case .fulfilled, .cancelled, .refunded, .underReview, .failed: true
        }
    }

    /// What to tell the user.
    public func message(in language: MessageLanguage = .preferred()) -> String {
        switch state {
        case .fulfilled: Messages.text("outcome.fulfilled", language)
        case .pending: Messages.text("outcome.pending", language)
        case .cancelled: Messages.text("outcome.cancelled", language)
        case .awaitingConfirmation:
            Messages.text(
                storeMayHaveCharged ? "outcome.awaitingConfirmation.charged" : "outcome.awaitingConfirmation", language)
        case .notPaid: Messages.text("outcome.notPaid", language)
        case .refunded: Messages.text("outcome.refunded", language)
        case .underReview: Messages.text("outcome.flagged", language)
        case .failed(let error): error.message(in: language)
        }
    }

    /// The outcome the server's view of an order gives; nil while it is not final.
    static func settled(_ order: Order) -> PurchaseOutcome? {
        let state: State
        switch order.status {
        case .fulfilled: state = .fulfilled
        case .cancelled, .closed: state = .cancelled
        case .failed: state = .failed(.rejected(code: "order_failed", message: "the order failed"))
        case .refunded, .revoked: state = .refunded
        case .flagged: state = .underReview
        case .created, .paying, .paid: return nil
        }
        return PurchaseOutcome(
            orderNo: order.orderNo, productID: order.productID, channel: order.channel, state: state, order: order)
    }
}
