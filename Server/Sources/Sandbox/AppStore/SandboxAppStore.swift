import AppStore
import ChannelSupport
import Crypto
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

/// A local App Store: records purchases, signs transactions, renewal info and notifications with its own
/// authority exactly as the App Store does (ES256, `x5c` of leaf, intermediate and root carrying Apple's OIDs),
/// and serves the App Store Server API endpoints, checking the merchant's ES256 bearer token. Faults can be
/// injected: 5xx, 429 with `Retry-After`, timeouts, signatures by an expired or a revoked leaf, and an OCSP
/// responder that is down.
public actor SandboxAppStore {
    /// A fault applied to the next API calls (for `expiredLeaf` and `revokedLeaf`, to the next signed data; for
    /// `ocspUnavailable`, to the next OCSP requests).
    public enum Fault: Sendable, Hashable {
        /// `verifyReceipt` answers status 21005 (receipt server unavailable).
        case receiptServerUnavailable
        case serverError
        case rateLimited(retryAfterSeconds: Int)
        case timeout(Duration)
        case expiredLeaf
        /// The next signed data comes from a new leaf that the OCSP responder reports revoked.
        case revokedLeaf
        /// The OCSP responder answers 503.
        case ocspUnavailable
    }

    /// Faults that apply to signing or to OCSP, not to the next API call.
    static let nonAPIFaults: Set<Fault> = [
        .expiredLeaf, .revokedLeaf, .ocspUnavailable, .receiptServerUnavailable,
    ]

    public nonisolated let authority: SandboxAppStoreCA
    public nonisolated let bundleID: String
    public nonisolated let appAppleID: Int64
    let merchantKeyID: String
    let merchantKey: P256.Signing.PublicKey
    let clock: any WallClock
    /// How long its subscription periods, grace and retry periods last.
    public nonisolated let renewalRate: SandboxRenewalRate
    /// Where each notification is posted once as it is made (Apple's sandbox does not retry); nil: kept in the
    /// notification history only.
    var notificationSink: NotificationSink? {
        didSet {
            outbox?.finish()
            outbox = nil
        }
    }
    /// The notifications waiting to be posted to ``notificationSink`` (``post(_:)``).
    var outbox: AsyncStream<String>.Continuation?
    /// Notifications not posted because too many were waiting (each is in the notification history).
    public internal(set) var undeliveredNotifications = 0
    /// Subscriptions whose next billing fails, with the grace period's days (``failNextBilling(_:graceDays:)``).
    var failingBills: [String: Int] = [:]
    /// Subscriptions whose grace period's end was announced (`GRACE_PERIOD_EXPIRED`).
    var graceEndsAnnounced: Set<String> = []
    /// Signs StoreKit 1 receipts; its root is what merchants trust for sandbox receipts.
    public nonisolated let receipts: SandboxReceiptSigner
    let sharedSecret: String?

    var testNotifications: [String: String] = [:]
    /// What each product costs in the store's one storefront (China), by product id (``setPrices(_:)``).
    var prices: [String: Money] = [:]
    /// The subscription offers set up in App Store Connect, by offer id (``setOffers(_:)``).
    var offers: [String: Offer] = [:]
    /// The subscription group of each auto-renewable product, by product id (``setSubscriptionGroups(_:)``); a
    /// product not in it is in ``subscriptionGroup``.
    var subscriptionGroups: [String: String] = [:]
    /// Transaction ids start from the clock, so a restarted sandbox (the data folder kept) never reuses one.
    var nextID: Int64
    let journal: SandboxJournal<KeptTransaction>
    /// The notification made last (what a refund answers).
    public private(set) var latestNotification: String?
    /// The journal is read a piece at a time and never held: it may be as large as the store's history.
    static let maxJournalBytes = 64 << 30
    var records = SandboxAppStoreRecords()
    var faults: [Fault] = []
    var revokedSerials: Set<[UInt8]> = []
    /// Consumption information the merchant sent, by transaction id (the JSON body as received).
    public internal(set) var consumptionReports: [String: [UInt8]] = [:]

    /// - Parameter folder: where the store keeps its transactions and notifications across restarts
    ///   (``SandboxJournal``); nil keeps nothing.
    public init(
        authority: SandboxAppStoreCA, receipts: SandboxReceiptSigner, bundleID: String, appAppleID: Int64,
        merchantKeyID: String,
        merchantKey: P256.Signing.PublicKey, sharedSecret: String? = nil, clock: any WallClock = SystemClock(),
        renewalRate: SandboxRenewalRate = .realTime, folder: URL? = nil
    ) throws {
        self.renewalRate = renewalRate
        self.authority = authority
        self.receipts = receipts
        self.sharedSecret = sharedSecret
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.merchantKeyID = merchantKeyID
        self.merchantKey = merchantKey
        self.clock = clock
        nextID = 2_000_000_000_000_000 + (clock.now().millisecondsSince1970 % 1_000_000_000_000) * 100 + 1
        guard let folder else {
            journal = .inMemoryLines
            return
        }
        // Every transaction's latest line and every notification, indexed as they were written; ids go on after the
        // highest.
        var records = SandboxAppStoreRecords()
        var next = nextID
        journal = try SandboxJournal<KeptTransaction>.open(
            folder.appendingPathComponent("appstore.journal"), maxBytes: Self.maxJournalBytes,
            reading: KeptTransaction.Index.init(line:)
        ) { transaction, ref in
            records.apply(transaction, at: ref)
            if let id = Int64(transaction.id), id >= next { next = id + 1 }
        }
        self.records = records
        nextID = next
    }

    /// A transaction as signed from now on, kept in the journal before anyone sees it; its notification, if it
    /// makes one, is then posted.
    func keep(_ kept: KeptTransaction) throws {
        let ref = try journal.append(kept)
        records.apply(.init(kept), at: ref)
        if let notification = kept.notification {
            latestNotification = notification.payload
            post(notification.payload)
        }
    }

    /// The line that signed transaction `id` last, read back from the journal; nil for a transaction never kept.
    func kept(_ id: String) throws -> KeptTransaction? {
        try records.line(of: id).map(journal.read)
    }

    /// Transaction `id` as signed last.
    func signedTransaction(_ id: String) throws -> String? { try kept(id)?.signed }

    /// What transaction `id` says, as signed last.
    func payload(of id: String) throws -> [String: Any]? {
        guard let kept = try kept(id) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(kept.payload.utf8))) as? [String: Any]
    }

    /// The transactions of chain `original`, oldest first (its own alone when it is in no chain); nil when no
    /// transaction starts one.
    func transactions(ofChain original: String) throws -> [String]? {
        if let chain = records.chain(original) { return chain }
        guard let kept = try kept(original), kept.original == original else { return nil }
        return [original]
    }

    /// The customer's transactions the App Store's history of `id` holds, bought in `[from, until)` (Get Transaction
    /// History selects by `purchaseDate`), oldest first; nil when no transaction is `id`.
    func history(of id: String, from: Int64?, until: Int64?) throws -> [String]? {
        guard let kept = try kept(id) else { return nil }
        return try records.transactions(of: records.customerChains(of: kept.original))
            .filter { id in
                let bought = Self.milliseconds(try payload(of: id)?["purchaseDate"]) ?? 0
                return bought >= from ?? .min && bought < until ?? .max
            }
            .sorted { ($0.count, $0) < ($1.count, $1) }
    }

    /// Every line of the journal, oldest first, read a piece at a time.
    func everyLine(_ each: (KeptTransaction) throws -> Void) throws {
        try journal.forEach(each)
    }

    /// The store's prices, as set in App Store Connect: each transaction signed from now on says what its product
    /// cost (`price`, `currency`).
    public func setPrices(_ prices: [String: Money]) {
        self.prices = prices
    }

    /// The subscription groups as set up in App Store Connect, by product id: each subscription transaction signed from
    /// now on names its product's (`subscriptionGroupIdentifier`).
    public func setSubscriptionGroups(_ groups: [String: String]) {
        subscriptionGroups = groups
    }

    /// A subscription offer as App Store Connect sets it up: what kind it is and what its first period costs in the
    /// store's storefront (0: a free trial).
    public struct Offer: Sendable, Hashable {
        public enum Kind: Int64, Sendable {
            case promotional = 2
            case winBack = 4
        }
        public var kind: Kind
        public var price: Money

        public init(kind: Kind, price: Money) {
            self.kind = kind
            self.price = price
        }
    }

    /// The store's subscription offers: a purchase with one of them is charged its price, and its transaction says
    /// so (`offerType`, `offerIdentifier`, `offerDiscountType`, `price`), as Apple's does.
    public func setOffers(_ offers: [String: Offer]) {
        self.offers = offers
    }

    public func inject(_ fault: Fault, count: Int = 1) {
        faults.append(contentsOf: repeatElement(fault, count: count))
    }

    /// Faults still waiting for their call (a test tells from it whether a call was made).
    public var pendingFaults: Int { faults.count }

    /// The Server API calls answered, by endpoint (`history`, `transactions`, `notifications`, …): what a test holds
    /// the cost of a statement day to.
    public internal(set) var serverAPICalls: [String: Int] = [:]
    /// At most this many Server API calls a second (nil: no limit); past it, 429 with `Retry-After`, as Apple answers
    /// past an endpoint's limit (https://developer.apple.com/documentation/appstoreserverapi/ratelimitexceedederror).
    var rateLimit: Int?
    var rateWindow: (start: ContinuousClock.Instant, calls: Int)?

    /// How the Server API answers until told otherwise (``setServerAPI(_:)``).
    public enum ServerAPIState: Sendable, Hashable {
        case up
        /// Every call hangs until its caller gives up, as when Apple's host drops the connection attempt.
        case unreachable
        /// Every call is answered after `delay`.
        case slow(Duration)
    }

    var serverAPIState = ServerAPIState.up
    /// Per endpoint, the count of answered calls past which its calls are refused (``refuseServerAPI(after:endpoint:)``).
    var refusals: [String: Int] = [:]
    /// Server API calls begun, answered or not (one made while the API is unreachable hangs, and counts here).
    public internal(set) var serverAPIAttempts = 0

    /// Drops the faults still waiting: the store answers normally again.
    public func clearFaults() {
        faults.removeAll()
    }

    static let notFound = json(404, #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)

    static func json(_ status: Int, _ text: String) -> ProviderHTTPResponse {
        ProviderHTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8))
    }

    static func encode(_ object: [String: Any]) throws -> String {
        String(
            decoding: try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    static func milliseconds(_ date: Date) -> Int64 { date.millisecondsSince1970 }

    /// This simulator behind an ``InProcessTransport``.
    public nonisolated var transport: InProcessTransport {
        InProcessTransport { method, pathAndQuery, headers, body in
            await self.handle(method: method, pathAndQuery: pathAndQuery, headers: headers, body: body)
        }
    }
}
