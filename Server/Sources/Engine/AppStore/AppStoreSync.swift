import AppStore
import Foundation
import OrderSafeModel

extension AppStorePayments {
    /// The most signed transactions one restore may carry.
    public static let maxSyncTransactions = 100

    /// Restore: records whatever the app holds that the ledger lacks (idempotently: what is recorded stays as it
    /// is), then follows the App Store Server API's history of each chain recorded for the caller, so renewals
    /// nobody brought are granted too. Another user's transaction the app holds is recorded for its owner, as in
    /// submissions, and its history is not followed: nobody learns or gains another customer's purchases by holding
    /// one of their signed transactions. The answer lists what was given, and of the history only the caller's.
    public func sync(_ request: AppStoreSyncRequest, userID: String) async throws -> AppStoreSubmissionResponse {
        let signed = request.signedTransactions ?? []
        guard !signed.isEmpty || request.receipt != nil else {
            throw AppStoreSubmissionError.malformed("give signed_transactions, a receipt, or both")
        }
        guard signed.count <= Self.maxSyncTransactions else {
            throw AppStoreSubmissionError.malformed(
                "at most \(Self.maxSyncTransactions) signed transactions per restore")
        }
        // Each transaction is a submission of its own: kept (or refused) as one, deduplicated per user and
        // transaction, so a restore keeps nothing a submission would not and varying its list makes no new entries.
        var results: [AppStoreTransactionResult] = []
        var failure: (any Error)?
        var submissions = signed.map { AppStoreSubmission(signedTransaction: $0) }
        if let receipt = request.receipt { submissions.append(AppStoreSubmission(receipt: receipt)) }
        for submission in submissions {
            do {
                results += try await submit(submission, userID: userID).transactions
            } catch {
                failure = failure ?? error  // the rest are recorded all the same; the app restores again
            }
        }
        // A result recorded for this user carries its order (one recorded for another user's order carries none);
        // one walk covers a whole chain.
        var seen = Set(results.map(\.transactionID))
        var followed: Set<String> = []
        for result in results
        where result.verdict == .recorded && result.order?.userID == userID && !followed.contains(result.transactionID)
        {
            let chain = try await followHistory(of: result.transactionID, submitter: userID)
            followed.formUnion(chain.map(\.transactionID))
            results += chain.filter { $0.order?.userID == userID && seen.insert($0.transactionID).inserted }
        }
        if let failure { throw failure }
        return AppStoreSubmissionResponse(transactions: results)
    }
}
