import Foundation
import Ledger
import OrderSafeModel

/// What asking the provider about an unsettled order found.
public enum SettlementState: Sendable, Equatable {
    /// Paid: the payment is recorded now (or was before).
    case paid
    /// The provider says it is not paid (no trade yet, Alipay `WAIT_BUYER_PAY`, WeChat Pay `NOTPAY`); ask again later.
    case unpaid
    /// Being paid (WeChat Pay `USERPAYING`, `ACCEPT`), or the answer lacks what recording needs; ask again later.
    case pending
    /// The provider closed the trade or the payment failed; nothing will be paid.
    case closed(reason: String)
}

/// A channel that can be asked about its orders (Alipay, WeChat Pay): the reconciler's seam.
public protocol OrderSettler: Sendable {
    /// How long an unpaid order stays payable at the provider.
    var paymentWindow: TimeInterval { get }
    /// Queries the provider and records a payment it reports, exactly as a notification would.
    func settle(_ order: Order, cause: EventCause) async throws -> SettlementState
    /// Closes the order at the provider, so it can no longer be paid.
    func close(_ order: Order) async throws
    /// Rebuilds the order `orderNo`, which the ledger lacks (lost with a restored database), from the provider's
    /// record of its payment (``OrderProvenance``); the reason when there is no paid trade of that number or its
    /// record cannot rebuild it.
    func rebuildOrder(_ orderNo: String) async throws -> OrderRebuild
}
