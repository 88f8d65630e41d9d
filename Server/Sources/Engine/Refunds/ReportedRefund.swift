import Foundation
import Ledger
import OrderSafeModel

/// A refund a provider reported in a notification. A full refund reverses the payment's grants once; a partial one
/// is noted on the order for a human (which part of the goods it covers is the merchant's call).
struct ReportedRefund {
    var channel: Channel
    var providerTransactionID: String
    var orderNo: String
    /// Refunded so far and the payment's total, in minor units.
    var refundedMinor: Int64
    var totalMinor: Int64
    /// Names the proof (`inbox:42`).
    var evidence: String
    /// What reported it: a notification, or reconciliation (a statement's refund confirmed by a query).
    var cause: EventCause = .notification

    /// The reversal made, or nil when the refund was partial and only noted.
    func apply(to ledger: any OrderBook, at date: Date) async throws -> ReversalOutcome? {
        guard refundedMinor == totalMinor else {
            try await ledger.note(
                orderNo: orderNo, kind: .partialRefund, cause: cause,
                evidence:
                    "\(channel.rawValue):\(providerTransactionID) refunded \(refundedMinor) of \(totalMinor) \(evidence)",
                at: date)
            return nil
        }
        return try await ledger.reverse(
            Reversal(
                channel: channel, providerTransactionID: providerTransactionID, kind: .refunded, cause: cause,
                evidence: evidence),
            at: date)
    }
}
