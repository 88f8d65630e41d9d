import Foundation
import Ledger
import OrderSafeModel

/// A channel whose provider publishes a daily statement: the statement reconciler's seam. The statement only
/// points; every payment or refund it finds missing is confirmed by asking the provider before it is recorded.
public protocol StatementSource: Sendable {
    /// Where the provider's days begin: seconds east of UTC.
    var utcOffset: Int { get }
    /// Downloads, checks and parses the day's statement.
    func statement(of day: StatementDay) async throws -> StatementAvailability
    /// The provider charges each buyer in their storefront's currency (the App Store): a payment in another
    /// currency than the ledger's is matched by its transaction, not by its amount.
    var storefrontPrices: Bool { get }
    /// Asks the provider about a payment its statement lists and the ledger lacks and, when it confirms it, records
    /// it through the channel's own path (`evidence` names the statement line).
    func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery
    /// The day the provider says a recorded payment was made (asking it, the authority); nil when it says the
    /// payment was not made.
    func paidDay(of payment: RecordedPayment) async throws -> StatementDay?
    /// Asks the provider about a refund its statement lists and, when it confirms it, records it through the refund
    /// path (`evidence` names the statement line); true when the payment is reversed now.
    func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws -> Bool
}

extension StatementSource {
    public var storefrontPrices: Bool { false }
}

/// What asking the provider about a payment its statement lists found.
public enum PaymentRecovery: Sendable, Hashable {
    /// It names no order of the channel the ledger holds, and nothing else binds it to a user.
    case noOrder(String)
    /// The provider was asked about the payment of `orderNo` (nil: not known yet) and answered `answer`; the
    /// ledger holds the payment now or it does not.
    case asked(orderNo: String?, answer: String)
}

extension OrderSettler {
    /// A statement's payment of a channel whose orders are queried (Alipay, WeChat Pay): its order settled through
    /// the query, the authority, exactly as the reconciler settles any open order.
    func recoverListedPayment(_ entry: StatementEntry, channel: Channel, ledger: any OrderBook) async throws
        -> PaymentRecovery
    {
        guard let order = try await ledger.order(number: entry.orderNo), order.channel == channel else {
            return .noOrder("no \(channel.rawValue) order \(entry.orderNo) in the ledger")
        }
        do {
            return .asked(orderNo: order.orderNo, answer: "\(try await settle(order, cause: .reconciliation))")
        } catch {
            return .asked(orderNo: order.orderNo, answer: "the query failed: \(error)")
        }
    }
}
