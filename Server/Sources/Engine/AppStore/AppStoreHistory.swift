import AppStore
import ChannelSupport
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

extension AppStorePayments {
    /// Pulls the App Store's notification history for `start…end` and processes every notification through the
    /// inbox, as if it had been posted: the ones that never arrived fill the gap, the others are absorbed.
    /// Returns how many notifications the history held.
    public func pullNotificationHistory(from start: Date, to end: Date) async throws -> Int {
        var count = 0
        try await forEachNotification(from: start, to: end) { payload in
            _ = try await handleNotification(body: Array(#"{"signedPayload":\#(JSONString.encode(payload))}"#.utf8))
            count += 1
        }
        return count
    }

    /// Every signed notification of the App Store's notification history for `start…end`, page after page.
    func forEachNotification(from start: Date, to end: Date, _ body: (String) async throws -> Void) async throws {
        guard let api else { return }
        var pagination: String?
        repeat {
            let page = try await api.notificationHistory(
                startDate: start.millisecondsSince1970, endDate: end.millisecondsSince1970, paginationToken: pagination)
            for payload in page.signedPayloads { try await body(payload) }
            pagination = page.hasMore ? page.paginationToken : nil
        } while pagination != nil
    }

    /// Follows the App Store Server API's history of the customer `transactionID` belongs to and records what it
    /// holds: the transactions of that transaction's own chain (renewals the app or the notifications never
    /// brought) for `owner`, who owns the chain; every other one only as its own binding says (its order's user, its
    /// chain's owner), never adopted for `owner` — a customer's history spans every Apple account holder on a shared
    /// device and every app account signed in on it, and one of them must not gain another's purchases. What binds
    /// to nobody waits for its owner's app or notification, as unbound transactions do.
    func followHistory(of transactionID: String, submitter owner: String) async throws
        -> [AppStoreTransactionResult]
    {
        guard let api else { return [] }
        var purchases: [AppStorePurchase] = []
        for jws in try await api.fullTransactionHistory(transactionID: transactionID) {
            guard let transaction = try? await verifier.verifyTransaction(jws),
                let purchase = AppStorePurchase(transaction)
            else { continue }
            purchases.append(purchase)
        }
        let chain = purchases.first { $0.transactionID == transactionID }.map(\.originalTransactionID)
        var results: [AppStoreTransactionResult] = []
        for purchase in purchases {
            let owned = chain != nil && purchase.originalTransactionID == chain
            do {
                results.append(
                    try await record(
                        purchase, submitter: owned ? owner : nil, cause: .reconciliation, evidence: "history",
                        in: RecordingScope(write: context.ledger)))
            } catch AppStoreSubmissionError.productNotInCatalog, AppStoreSubmissionError.unbound {
                continue
            }
        }
        return results
    }
}
