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
    /// What the provider says (asked, the authority) of a payment the ledger recorded on a day whose statement
    /// does not list it.
    func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment
    /// What the provider says of a payment the ledger reversed on a day whose statement lists no refund of it.
    func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund
    /// Asks the provider about a refund its statement lists and, when it confirms it, records it through the refund
    /// path (`evidence` names the statement line); true when the payment is reversed now.
    func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws -> Bool
}

extension StatementSource {
    public var storefrontPrices: Bool { false }
}

/// What a provider says of a payment the ledger recorded.
public enum ProviderPayment: Sendable, Hashable {
    /// Paid on this day (in the provider's zone).
    case paid(on: StatementDay)
    case notPaid
    /// Access shared without money changing hands (an App Store family-shared purchase: the purchaser's own
    /// transaction is the payment, on the purchaser's statement).
    case shared
}

/// What a provider says of a payment the ledger reversed.
public enum ProviderRefund: Sendable, Hashable {
    /// Refunded on this day (in the provider's zone).
    case refunded(on: StatementDay)
    /// Refunded, on a day its query does not say (WeChat Pay's trade state `REFUND`, Alipay's `TRADE_CLOSED`).
    case refundedUndated
    case notRefunded
    /// Taken back without money returned (an App Store family-shared purchase revoked).
    case shared
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
    /// the query, the authority, exactly as the reconciler settles any open order. An order the ledger lacks (lost
    /// with a restored database) is first rebuilt by `rebuild` from the provider's own record of it.
    func recoverListedPayment(
        _ entry: StatementEntry, channel: Channel, ledger: any OrderBook,
        rebuild: (String) async throws -> OrderRebuild
    ) async throws -> PaymentRecovery {
        let missing = "no \(channel.rawValue) order \(entry.orderNo) in the ledger"
        var order = try await ledger.order(number: entry.orderNo)
        if order == nil {
            switch try await rebuild(entry.orderNo) {
            case .rebuilt(let rebuilt): order = rebuilt
            case .unrebuildable(let reason): return .noOrder("\(missing); \(reason)")
            }
        }
        guard let order, order.channel == channel else { return .noOrder(missing) }
        do {
            return .asked(orderNo: order.orderNo, answer: "\(try await settle(order, cause: .reconciliation))")
        } catch {
            return .asked(orderNo: order.orderNo, answer: "the query failed: \(error)")
        }
    }
}
