import Ledger
import OrderSafeModel

extension JobKind {
    /// Pull the App Store's notification history since the last pull (recurring; the payload is where the last pull
    /// ended, in milliseconds).
    public static let appStoreHistory = JobKind(rawValue: "appstore_history")
    /// Pull the App Store history of a subscription chain that just gained its first owner (key: the transaction id,
    /// payload: the owner), once its purchase is answered.
    public static let appStoreChainHistory = JobKind(rawValue: "appstore_chain_history")
}

extension OrderEventKind {
    /// An App Store notification about the order's transaction (`type` as Apple names it, lowercased here):
    /// `appstore:refund`.
    static func appStore(_ type: String) -> OrderEventKind { .notification(.appStore, type) }
}
