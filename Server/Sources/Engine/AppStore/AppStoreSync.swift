import AppStore
import Foundation
import OrderSafeModel

extension AppStorePayments {
    /// The most signed transactions one restore may carry.
    public static let maxSyncTransactions = 100

    /// Restore: records whatever the app holds that the ledger lacks (idempotently: what is recorded stays as it
    /// is), then follows the App Store Server API's history of each original transaction the user owns, so
    /// renewals nobody brought are granted too. Another user's transactions are refused as in submissions.
    public func sync(_ request: AppStoreSyncRequest, userID: String) async throws -> AppStoreSubmissionResponse {
        let signed = request.signedTransactions ?? []
        guard !signed.isEmpty || request.receipt != nil else {
            throw AppStoreSubmissionError.malformed("give signed_transactions, a receipt, or both")
        }
        guard signed.count <= Self.maxSyncTransactions else {
            throw AppStoreSubmissionError.malformed(
                "at most \(Self.maxSyncTransactions) signed transactions per restore")
        }
        return try await stored(request, kind: .sync, userID: userID) { evidence in
            try await restore(request, userID: userID, evidence: evidence)
        }
    }

    private func restore(_ request: AppStoreSyncRequest, userID: String, evidence: String) async throws
        -> AppStoreSubmissionResponse
    {
        var results: [AppStoreTransactionResult] = []
        for jws in request.signedTransactions ?? [] {
            results.append(try await submit(signedTransaction: jws, userID: userID, evidence: evidence))
        }
        if let receipt = request.receipt {
            results += try await submit(
                receipt: receipt, transactionID: nil, applicationUsername: nil, userID: userID, evidence: evidence)
        }
        // `recorded` means credited to this user (another user's is `rejected`); one walk covers a whole chain.
        var seen = Set(results.map(\.transactionID))
        var followed: Set<String> = []
        for result in results where result.verdict == .recorded && !followed.contains(result.transactionID) {
            let chain = try await followHistory(of: result.transactionID, submitter: userID)
            followed.formUnion(chain.map(\.transactionID))
            results += chain.filter { seen.insert($0.transactionID).inserted }
        }
        return AppStoreSubmissionResponse(transactions: results)
    }
}
