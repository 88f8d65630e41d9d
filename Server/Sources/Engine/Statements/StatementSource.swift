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
    /// The day the provider says a recorded payment was made (asking it, the authority); nil when it says the
    /// payment was not made.
    func paidDay(of payment: RecordedPayment) async throws -> StatementDay?
    /// Asks the provider about a refund its statement lists and, when it confirms it, records it through the refund
    /// path (`evidence` names the statement line); true when the payment is reversed now.
    func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws -> Bool
}
