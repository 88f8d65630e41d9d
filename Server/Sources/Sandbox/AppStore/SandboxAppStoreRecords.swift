import Foundation
import OrderSafeModel

/// One line of the sandbox App Store's journal (``SandboxJournal``): a transaction as signed from then on (a new
/// purchase, or one signed again: a refund, a renewal date extension), with what that change added to the store.
struct KeptTransaction: Codable {
    /// A notification of the App Store Server Notifications history.
    struct Notification: Codable {
        var signedDate: Int64
        var payload: String
    }

    var id: String
    var signed: String
    /// The signed payload as JSON text (the store signs it again when it changes).
    var payload: String
    var token: UUID?
    /// Its original transaction's id (itself for a first purchase).
    var original: String
    /// Where the subscription's period ends now, for a purchase or an extension of one.
    var periodEnd: Date?
    /// An auto-renewable subscription's period, for a purchase (what its renewals last).
    var period: GrantPeriod?
    /// Its entry in the app's StoreKit 1 receipt (new purchases).
    var receiptEntry: SandboxReceiptSigner.Purchase?
    /// The device it was bought on (new purchases made through ``SandboxAppStoreDevices``).
    var device: String?
    var notification: Notification?
    /// An auto-renewable subscription's renewal information as signed from then on (JSON text), when it changed.
    var renewal: String?

    init(
        id: String, signed: String, payload: String, token: UUID? = nil, original: String, periodEnd: Date? = nil,
        period: GrantPeriod? = nil, receiptEntry: SandboxReceiptSigner.Purchase? = nil, device: String? = nil,
        notification: Notification? = nil,
        renewal: String? = nil
    ) {
        self.id = id
        self.signed = signed
        self.payload = payload
        self.token = token
        self.original = original
        self.periodEnd = periodEnd
        self.period = period
        self.receiptEntry = receiptEntry
        self.device = device
        self.notification = notification
        self.renewal = renewal
    }
}

/// What the sandbox App Store has recorded: every transaction as last signed, and what each purchase added.
struct SandboxAppStoreRecords {
    var transactions: [String: String] = [:]
    /// What each transaction says, to sign it again when Apple changes it (a refund, a renewal date extension).
    var payloads: [String: [String: Any]] = [:]
    /// Where each auto-renewable subscription's current period ends, by original transaction id.
    var periodEnds: [String: Date] = [:]
    /// Each auto-renewable subscription's period, by original transaction id.
    var periods: [String: GrantPeriod] = [:]
    var tokens: [String: UUID] = [:]
    /// The transactions of each original transaction, oldest first.
    var originals: [String: [String]] = [:]
    var receiptPurchases: [SandboxReceiptSigner.Purchase] = []
    var notifications: [(signedDate: Int64, payload: String)] = []
    /// The device that bought each transaction bought on one (``SandboxAppStoreDevices``).
    var purchasingDevices: [String: String] = [:]
    /// Each auto-renewable subscription's renewal information as last signed, by original transaction id.
    var renewals: [String: [String: Any]] = [:]

    /// Records a transaction as signed now (`payload` is its parsed ``KeptTransaction/payload``).
    mutating func apply(_ kept: KeptTransaction, payload: [String: Any]) {
        if transactions[kept.id] == nil {
            tokens[kept.id] = kept.token
            originals[kept.original, default: []].append(kept.id)
            if let entry = kept.receiptEntry { receiptPurchases.append(entry) }
            if let device = kept.device { purchasingDevices[kept.id] = device }
        }
        transactions[kept.id] = kept.signed
        payloads[kept.id] = payload
        if let end = kept.periodEnd { periodEnds[kept.original] = end }
        if let period = kept.period { periods[kept.original] = period }
        if let renewal = kept.renewal,
            let fields = (try? JSONSerialization.jsonObject(with: Data(renewal.utf8))) as? [String: Any]
        {
            renewals[kept.original] = fields
        }
        if let notification = kept.notification {
            notifications.append((notification.signedDate, notification.payload))
        }
    }

    /// The customer's transactions the App Store's history of `id` holds, bought in `[from, until)` (Get Transaction
    /// History selects by `purchaseDate`), oldest first; nil when no transaction is `id`. The history is the
    /// customer's, not the subscription's (https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history:
    /// "a customer's in-app purchase transaction history for your app"): here a customer is the device that bought
    /// `id`'s chain, whose every chain the history holds, or, for a chain no device bought, that chain alone.
    func history(of id: String, from: Int64?, until: Int64?) -> [String]? {
        guard let chain = originals[id] != nil ? id : originals.first(where: { $0.value.contains(id) })?.key else {
            return nil
        }
        let chains = purchasingDevices[chain].map { device in originals.keys.filter { purchasingDevices[$0] == device }
        }
        return (chains ?? [chain]).flatMap { originals[$0] ?? [] }
            .filter { id in
                let bought = SandboxAppStore.milliseconds(payloads[id]?["purchaseDate"]) ?? 0
                return bought >= from ?? .min && bought < until ?? .max
            }
            .sorted { ($0.count, $0) < ($1.count, $1) }
    }
}
