import Foundation
import OrderSafeModel

/// One purchase on its way, as kept on disk: enough to resume it after the app was killed at any point. It holds
/// no token or secret; the signed transaction it may hold is what the store gave the app.
struct JournalEntry: Codable, Sendable, Hashable {
    /// Where the purchase stands; each stage is written before the step it enables.
    enum Stage: String, Codable, Sendable {
        /// About to create the order (the entry's id is the request's `Idempotency-Key`).
        case intent
        /// The order exists; the store or the provider's app is being asked to pay.
        case ordered
        /// Ask to Buy: waiting for a parent; the transaction comes through `Transaction.updates`.
        case pendingApproval
        /// The store charged: its signed transaction is being recorded by the server.
        case submitting
        /// The provider's app answered (or the app was killed while it was open): waiting for the server's truth.
        case awaitingProvider
        /// The server recorded the transaction, but StoreKit could not verify it on this device, so it is never
        /// finished (StoreKit delivers it again at every launch): the entry says it needs nothing more, and leaves once
        /// the store no longer lists it.
        case recorded
        /// The order was closed (its buyer told "cancelled") after a kill left unknown what StoreKit did with the
        /// purchase — Ask to Buy's `.pending` is among what a kill can lose, and a parent may approve for a day. The
        /// entry only watches: a transaction that still comes names it, and is recorded and told to its buyer; after
        /// ``OrderSafe/askToBuyLapse`` it leaves the journal without a word.
        case closedWatching
        /// The server recorded the transaction for its buyer while another user of this device was signed in: the
        /// buyer is told at their next launch (its signed transaction is submitted again, and the server answers its
        /// owner with the order). Another user's launch leaves it, for ``OrderSafe/ownerNoticeLapse`` at most.
        case recordedForOwner
    }

    var id: UUID
    /// Who was signed in when it was made (nil: an entry from before OrderSafeKit knew, or a transaction that came
    /// without an order). Another user's entry is still carried through — the server credits its owner — but its
    /// outcome is never shown to whoever is signed in now.
    var userID: String?
    var productID: String
    var channel: Channel
    var stage: Stage
    var orderNo: String?
    var orderUUID: UUID?
    var transactionID: UInt64?
    var signedTransaction: String?
    /// The provider app's result code (`resultStatus`, `errCode`), a hint only.
    var providerResult: String?
    var createdAt: Date
    var updatedAt: Date
    /// How many times the server was asked about it without a definitive answer.
    var attempts: Int
    /// Not submitted again before this: the server answered that it did not record the transaction (rejected, or held
    /// because its settings cannot verify it), and asking at every launch would change nothing sooner.
    var retryAfter: Date?
    /// StoreKit answered `userCancelled` and the buyer was told so; the order is kept until ``retryAfter`` only for a
    /// transaction that may still come (StoreKit has answered `userCancelled` for purchases it charged), which is
    /// reported if it comes. Nothing else of it is reported again.
    var buyerCancelled: Bool?

    init(id: UUID, productID: String, channel: Channel, at date: Date) {
        self.id = id
        self.productID = productID
        self.channel = channel
        stage = .intent
        createdAt = date
        updatedAt = date
        attempts = 0
    }

    /// The entry of a transaction that came without one (delivered at launch, renewed, bought on another device):
    /// made when the server does not record it, so its waits survive a relaunch.
    init(transaction: StoreTransaction, at date: Date) {
        self.init(id: UUID(), productID: transaction.productID, channel: .appStore, at: date)
        orderUUID = transaction.appAccountToken
    }

    /// The wait before a transaction the server did not record is submitted again: 30 s, doubling with each
    /// answer, at most `cap` (``ConfirmationPolicy/notRecordedRetryCap``, six hours by default).
    static func retryDelay(attempts: Int, cap: TimeInterval = 6 * 3600) -> TimeInterval {
        min(30 * pow(2, Double(min(max(attempts - 1, 0), 20))), cap)
    }
}
