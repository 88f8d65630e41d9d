import OrderSafeModel

/// What ``OrderSafe/restore()`` found: the signed-in user's holdings after it, and the server's answer for each
/// transaction the App Store holds for this Apple ID.
public struct RestoreResult: Sendable, Hashable {
    /// How many signed transactions go to the server in one request (its limit).
    static let perRequest = 100

    public var holdings: HoldingsResponse
    /// The server's word on each transaction sent, in the order sent.
    public var transactions: [AppStoreTransactionResult]

    /// The transactions the server recorded for another account than the one signed in: this Apple ID bought them
    /// while someone else was signed in to the app. Nothing of them is granted to this user; say so.
    public var ownedByOtherAccounts: [String] {
        transactions.filter { $0.verdict == .recorded && $0.order == nil }.map(\.transactionID)
    }

    /// The transactions the server refused (not genuine, or not this app's), with why.
    public var rejected: [AppStoreTransactionResult] { transactions.filter { $0.verdict == .rejected } }
}
