import AppStore
import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel

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
    private static let nonAPIFaults: Set<Fault> = [
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
    private let sharedSecret: String?

    private var testNotifications: [String: String] = [:]
    /// What each product costs in the store's one storefront (China), by product id (``setPrices(_:)``).
    private var prices: [String: Money] = [:]
    /// The subscription offers set up in App Store Connect, by offer id (``setOffers(_:)``).
    private var offers: [String: Offer] = [:]
    /// Transaction ids start from the clock, so a restarted sandbox (the data folder kept) never reuses one.
    private var nextID: Int64
    private let journal: SandboxJournal<KeptTransaction>
    /// The notification made last (what a refund answers).
    public private(set) var latestNotification: String?
    /// The journal is read a piece at a time and never held: it may be as large as the store's history.
    static let maxJournalBytes = 64 << 30
    var records = SandboxAppStoreRecords()
    private var faults: [Fault] = []
    private var revokedSerials: Set<[UInt8]> = []
    /// Consumption information the merchant sent, by transaction id (the JSON body as received).
    public private(set) var consumptionReports: [String: [UInt8]] = [:]

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
    public private(set) var serverAPICalls: [String: Int] = [:]
    /// At most this many Server API calls a second (nil: no limit); past it, 429 with `Retry-After`, as Apple answers
    /// past an endpoint's limit (https://developer.apple.com/documentation/appstoreserverapi/ratelimitexceedederror).
    private var rateLimit: Int?
    private var rateWindow: (start: ContinuousClock.Instant, calls: Int)?

    /// How the Server API answers until told otherwise (``setServerAPI(_:)``).
    public enum ServerAPIState: Sendable, Hashable {
        case up
        /// Every call hangs until its caller gives up, as when Apple's host drops the connection attempt.
        case unreachable
        /// Every call is answered after `delay`.
        case slow(Duration)
    }

    private var serverAPIState = ServerAPIState.up
    /// Per endpoint, the count of answered calls past which its calls are refused (``refuseServerAPI(after:endpoint:)``).
    private var refusals: [String: Int] = [:]
    /// Server API calls begun, answered or not (one made while the API is unreachable hangs, and counts here).
    public private(set) var serverAPIAttempts = 0

    /// Makes the Server API up, unreachable or slow for every call from now on.
    public func setServerAPI(_ state: ServerAPIState) {
        serverAPIState = state
    }

    /// After `calls` more answered calls of `endpoint` (`history`, `transactions`, …), every call of it is refused
    /// with 401, as when the merchant's key is revoked in App Store Connect midway; nil answers them again.
    public func refuseServerAPI(after calls: Int?, endpoint: String) {
        refusals[endpoint] = calls.map { serverAPICalls[endpoint, default: 0] + $0 }
    }

    /// Limits the Server API to `perSecond` calls a second, or lifts the limit (nil).
    public func setRateLimit(perSecond: Int?) {
        rateLimit = perSecond
        rateWindow = nil
    }

    /// The 429 a call past the rate limit gets; nil when it is within it (and counted).
    private func rateLimited() -> ProviderHTTPResponse? {
        guard let rateLimit else { return nil }
        let now = ContinuousClock.now
        if let window = rateWindow, now - window.start < .seconds(1) {
            guard window.calls < rateLimit else {
                var response = Self.json(429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
                response.headers["Retry-After"] = "1"
                return response
            }
            rateWindow = (window.start, window.calls + 1)
        } else {
            rateWindow = (now, 1)
        }
        return nil
    }

    /// Drops the faults still waiting: the store answers normally again.
    public func clearFaults() {
        faults.removeAll()
    }

    // MARK: The store

    /// A purchase as StoreKit 2 reports it: the signed transaction (also recorded, with its notification). An
    /// auto-renewable subscription's period (`subscriptionPeriod`, one month unless given) starts now, or for a
    /// renewal where the previous one ends, and is dated in `expiresDate`; a first period bought with its
    /// `introductoryOffer` lasts the offer's period and costs its price (a multi-period pay-as-you-go offer's later
    /// periods renew at the full price here, where Apple bills them at the offer's).
    @discardableResult
    public func purchase(
        productID: String, type: String = "Consumable", appAccountToken: UUID? = nil,
        originalTransactionID: String? = nil,
        subscriptionPeriod: GrantPeriod? = nil, familyShared: Bool = false, offerCode: String? = nil,
        promotionalOffer: String? = nil, introductoryOffer: IntroductoryOffer? = nil, device: String? = nil
    ) throws -> (transactionID: String, signed: String) {
        try purchase(
            productID: productID, type: type, appAccountToken: appAccountToken,
            originalTransactionID: originalTransactionID, subscriptionPeriod: subscriptionPeriod,
            familyShared: familyShared, offerCode: offerCode, promotionalOffer: promotionalOffer,
            introductoryOffer: introductoryOffer, device: device, start: nil)
    }

    /// ``purchase(productID:type:appAccountToken:originalTransactionID:subscriptionPeriod:familyShared:offerCode:promotionalOffer:device:)``;
    /// a subscription's period starts at `start` (the billing run renews where the last period ended; an upgrade
    /// starts now), else now or where the chain's last period ends, whichever is later.
    func purchase(
        productID: String, type: String, appAccountToken: UUID?, originalTransactionID: String?,
        subscriptionPeriod: GrantPeriod?, familyShared: Bool, offerCode: String?, promotionalOffer: String? = nil,
        introductoryOffer: IntroductoryOffer? = nil, device: String?, start: PeriodStart?
    ) throws -> (transactionID: String, signed: String) {
        let upgrade = start == .upgrade
        let id = String(nextID)
        nextID += 1
        let now = Self.milliseconds(clock.now())
        var expires: Date?
        var period: GrantPeriod?
        if type == "Auto-Renewable Subscription" {
            let original = originalTransactionID ?? id
            let chainPeriod = subscriptionPeriod ?? records.periods[original] ?? GrantPeriod(count: 1, unit: .month)
            let latest = max(clock.now(), records.periodEnds[original] ?? clock.now())
            let from: Date =
                switch start {
                case .upgrade: clock.now()
                case .lastPeriodEnd: records.periodEnds[original] ?? clock.now()
                case nil: latest
                }
            period = chainPeriod
            expires = renewalRate.end(of: introductoryOffer?.period ?? chainPeriod, from: from)
        }
        var payload = Self.transactionPayload(
            id: id, originalTransactionID: originalTransactionID, bundleID: bundleID, productID: productID, type: type,
            at: now,
            familyShared: familyShared)
        payload["appAccountToken"] = appAccountToken?.uuidString.lowercased()
        let offer = promotionalOffer.flatMap { offers[$0] }
        let introductoryPrice = introductoryOffer.map {
            $0.price ?? Money(amountMinor: 0, currency: prices[productID]?.currency ?? .cny)
        }
        if let price = introductoryPrice ?? offer?.price ?? prices[productID] {
            // Milli-units of the storefront's currency (JWSTransactionDecodedPayload `price`: "10990 is 10.99").
            var scale: Int64 = 1
            for _ in price.currency.minorUnitDigits..<3 { scale *= 10 }
            payload["price"] = price.amountMinor * scale
            payload["currency"] = price.currency.code
        }
        payload["expiresDate"] = expires.map(Self.milliseconds)
        if expires != nil { payload["subscriptionGroupIdentifier"] = Self.subscriptionGroup }
        if let offerCode {
            // Apple's `offerType` 3 is an offer code, `offerIdentifier` its reference name (App Store Server API,
            // JWSTransactionDecodedPayload `offerType`).
            payload["offerType"] = 3
            payload["offerIdentifier"] = offerCode
        } else if let introductoryOffer {
            // Apple's `offerType` 1, with how it is paid and how long it lasts (`offerDiscountType`, `offerPeriod`).
            payload["offerType"] = 1
            payload["offerDiscountType"] = introductoryOffer.paymentMode.discountType
            payload["offerPeriod"] = introductoryOffer.period.description
        } else if let promotionalOffer {
            // A promotional (2) or win-back (4) offer, by its id; its first period paid as you go, or free
            // (`offerDiscountType` FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT).
            payload["offerType"] = offer?.kind.rawValue ?? 2
            payload["offerIdentifier"] = promotionalOffer
            if let offer {
                payload["offerDiscountType"] = offer.price.amountMinor == 0 ? "FREE_TRIAL" : "PAY_AS_YOU_GO"
            }
        }
        let (signed, json) = try signedJSON(payload)
        // A subscription's notification carries its renewal information: a new period clears a billing failure
        // (Apple's DID_RENEW BILLING_RECOVERY).
        var renewal: [String: Any]?
        var notification: KeptTransaction.Notification
        if expires != nil {
            var fields = renewalFields(original: originalTransactionID ?? id, productID: productID)
            let recovered = fields["isInBillingRetryPeriod"] as? Bool == true
            // A subscription bought again after it expired (a win-back) is `SUBSCRIBED` `RESUBSCRIBE`.
            let resubscribed = fields["expirationIntent"] != nil
            for name in ["isInBillingRetryPeriod", "gracePeriodExpiresDate", "expirationIntent"] {
                fields.removeValue(forKey: name)
            }
            if upgrade || resubscribed {
                fields["autoRenewProductId"] = productID
                fields["autoRenewStatus"] = 1
            }
            renewal = fields
            let (type, subtype): (String, String?) =
                if upgrade {
                    ("DID_CHANGE_RENEWAL_PREF", "UPGRADE")
                } else if originalTransactionID == nil {
                    // An offer code's first purchase is OFFER_REDEEMED INITIAL_BUY ("the customer redeemed the offer
                    // for a first-time purchase": Apple's notificationType).
                    (offerCode == nil ? "SUBSCRIBED" : "OFFER_REDEEMED", "INITIAL_BUY")
                } else if resubscribed {
                    ("SUBSCRIBED", "RESUBSCRIBE")
                } else {
                    ("DID_RENEW", recovered ? "BILLING_RECOVERY" : nil)
                }
            notification = try self.notification(
                type, subtype: subtype, signedTransaction: signed, signedRenewalInfo: try sign(fields))
        } else {
            notification = try self.notification("ONE_TIME_CHARGE", signedTransaction: signed)
        }
        try keep(
            KeptTransaction(
                id: id, signed: signed, payload: json, token: appAccountToken,
                original: originalTransactionID ?? id,
                periodEnd: expires, period: period,
                receiptEntry: .init(
                    productID: productID, transactionID: id, originalTransactionID: originalTransactionID,
                    purchaseDate: clock.now(),
                    expiresDate: expires),
                device: device,
                notification: notification, renewal: try renewal.map(Self.encode)))
        return (id, signed)
    }

    /// Where a subscription period bought by the store itself starts.
    enum PeriodStart {
        /// Now: an upgrade, announced as `DID_CHANGE_RENEWAL_PREF` `UPGRADE`.
        case upgrade
        /// Where the chain's last period ended: a renewal billed on time.
        case lastPeriodEnd
    }

    /// The `appAccountToken` of an original transaction (a subscription's first purchase), which its renewals
    /// carry too (Apple's appAccountToken page: "the App Store returns the same UUID in Transaction.appAccountToken
    /// and renewal info"); throws when no chain starts with `transactionID`.
    func chainToken(of transactionID: String) throws -> UUID? {
        guard try transactions(ofChain: transactionID) != nil else {
            throw SandboxDeviceError.notRenewable(transactionID)
        }
        return try records.chainTokens[transactionID] ?? kept(transactionID)?.token
    }

    /// What a new transaction says, as the App Store writes it (milliseconds since 1970 in `at`).
    static func transactionPayload(
        id: String, originalTransactionID: String?, bundleID: String, productID: String, type: String, at now: Int64,
        familyShared: Bool
    ) -> [String: Any] {
        [
            "transactionId": id, "originalTransactionId": originalTransactionID ?? id, "bundleId": bundleID,
            "productId": productID,
            "purchaseDate": now, "originalPurchaseDate": now, "quantity": 1, "type": type,
            "inAppOwnershipType": familyShared ? "FAMILY_SHARED" : "PURCHASED", "signedDate": now,
            "environment": "Sandbox",
            "transactionReason": originalTransactionID == nil ? "PURCHASE" : "RENEWAL",
            "storefront": "CHN", "storefrontId": "143465", "appTransactionId": "704330170000000001",
        ]
    }

    /// The transactions bought on a device, with the device, their type and their latest signed form, oldest first:
    /// what each device's StoreKit queue is rebuilt from after a restart.
    func deviceTransactions() throws -> [(id: String, device: String, type: String, signed: String)] {
        try records.purchasingDevices.compactMap { id, device in
            guard let signed = try signedTransaction(id) else { return nil }
            return (id, device, try payload(of: id)?["type"] as? String ?? "Consumable", signed)
        }.sorted { ($0.id.count, $0.id) < ($1.id.count, $1.id) }
    }

    /// Every purchase so far: the simulator's own record (read back from its journal).
    public var payments: [SandboxPaymentRecord] {
        get throws {
            var payments: [SandboxPaymentRecord] = []
            try everyLine { kept in
                guard kept.receiptEntry != nil else { return }
                payments.append(
                    SandboxPaymentRecord(
                        providerTransactionID: kept.id, orderReference: kept.token?.uuidString.lowercased(),
                        amount: nil))
            }
            return payments
        }
    }

    /// The app's StoreKit 1 receipt now: every purchase so far, signed, base64 (what `appStoreReceiptURL` holds).
    /// `bundleID` makes the receipt of another app, signed by the same authority.
    public func appReceipt(bundleID: String? = nil) throws -> String {
        var purchases: [SandboxReceiptSigner.Purchase] = []
        try everyLine { kept in kept.receiptEntry.map { purchases.append($0) } }
        let receipt = try receipts.receipt(
            bundleID: bundleID ?? self.bundleID, purchases: purchases, createdAt: clock.now())
        return Data(receipt).base64EncodedString()
    }

    /// Apple refunds a transaction: it is signed again with `revocationDate` (as the App Store then reports it to
    /// the app, the history and the notification) and a `REFUND` notification is recorded. Returns the new JWS.
    @discardableResult
    public func refund(transactionID: String) throws -> String {
        guard var payload = try payload(of: transactionID) else {
            throw SandboxAppStoreError.unknownTransaction(transactionID)
        }
        payload["revocationDate"] = Self.milliseconds(clock.now())
        payload["revocationReason"] = 0
        payload["signedDate"] = Self.milliseconds(clock.now())
        let (signed, json) = try signedJSON(payload)
        try keep(
            KeptTransaction(
                id: transactionID, signed: signed, payload: json,
                original: payload["originalTransactionId"] as? String ?? transactionID,
                notification: try notification("REFUND", signedTransaction: signed)))
        return signed
    }

    /// Apple extends a subscription's renewal date (App Store Connect or the Server API's extension): the latest
    /// transaction of `originalTransactionID` is signed again with its `expiresDate` `days` later, and a
    /// `RENEWAL_EXTENDED` notification is recorded. Returns the transaction as now signed.
    @discardableResult
    public func extendRenewalDate(originalTransactionID: String, days: Int) throws -> String {
        guard let id = try transactions(ofChain: originalTransactionID)?.last, var payload = try payload(of: id),
            let end = records.periodEnds[originalTransactionID]
        else {
            throw SandboxAppStoreError.unknownTransaction(originalTransactionID)
        }
        let extended = end.addingTimeInterval(renewalRate.duration(days: days))
        payload["expiresDate"] = Self.milliseconds(extended)
        payload["signedDate"] = Self.milliseconds(clock.now())
        let (signed, json) = try signedJSON(payload)
        try keep(
            KeptTransaction(
                id: id, signed: signed, payload: json, original: originalTransactionID,
                periodEnd: extended,
                notification: try notification("RENEWAL_EXTENDED", signedTransaction: signed)))
        return signed
    }

    /// The subscription group of every auto-renewable product the sandbox sells (one group, as most apps have).
    public static let subscriptionGroup = "21000001"

    /// A signed V2 notification carrying `signedTransaction` and `signedRenewalInfo` (what the App Store would POST
    /// to the merchant).
    public func notification(
        type: String, subtype: String? = nil, signedTransaction: String?, signedRenewalInfo: String? = nil
    ) throws -> String {
        // Written as JSONSerialization would with sorted keys, without its cost on the nested JWS (kilobytes each).
        var data = [
            #""appAppleId":\#(appAppleID)"#, #""bundleId":\#(JSONString.encode(bundleID))"#, #""bundleVersion":"1""#,
            #""environment":"Sandbox""#,
        ]
        if let signedRenewalInfo { data.append(#""signedRenewalInfo":\#(JSONString.encode(signedRenewalInfo))"#) }
        if let signedTransaction { data.append(#""signedTransactionInfo":\#(JSONString.encode(signedTransaction))"#) }
        var fields = [
            #""data":{\#(data.joined(separator: ","))}"#, #""notificationType":\#(JSONString.encode(type))"#,
            #""notificationUUID":"\#(UUID().uuidString.lowercased())""#,
            #""signedDate":\#(Self.milliseconds(clock.now()))"#,
        ]
        if let subtype { fields.append(#""subtype":\#(JSONString.encode(subtype))"#) }
        fields.append(#""version":"2.0""#)
        return try nextSigner().sign("{" + fields.joined(separator: ",") + "}")
    }

    /// The notification a change of a transaction makes, as the history keeps it.
    func notification(
        _ type: String, subtype: String? = nil, signedTransaction: String, signedRenewalInfo: String? = nil
    ) throws -> KeptTransaction.Notification {
        KeptTransaction.Notification(
            signedDate: Self.milliseconds(clock.now()),
            payload: try notification(
                type: type, subtype: subtype, signedTransaction: signedTransaction,
                signedRenewalInfo: signedRenewalInfo))
    }

    /// The renewal information of the subscription `original` now, unsigned: as last signed, or a new one that
    /// renews to `productID`; dated now.
    func renewalFields(original: String, productID: String) -> [String: Any] {
        var fields =
            records.renewals[original] ?? [
                "autoRenewStatus": 1, "autoRenewProductId": productID,
                "recentSubscriptionStartDate": Self.milliseconds(clock.now()),
            ]
        fields["originalTransactionId"] = original
        fields["productId"] = productID
        fields["environment"] = "Sandbox"
        fields["appTransactionId"] = "704330170000000001"
        fields["signedDate"] = Self.milliseconds(clock.now())
        return fields
    }

    /// What the subscriber or the App Store's billing does to an auto-renewable subscription between its renewals.
    public enum SubscriptionEvent: Sendable, Hashable {
        /// Turned on or off in the subscriber's settings: `DID_CHANGE_RENEWAL_STATUS` `AUTO_RENEW_ENABLED|DISABLED`.
        case autoRenew(Bool)
        /// The next period renews to another product of the group (a downgrade or crossgrade at the period's end):
        /// `DID_CHANGE_RENEWAL_PREF` `DOWNGRADE`.
        case renewsTo(String)
        /// Billing failed at the period's end, with a grace period of `graceDays` (none when 0): `DID_FAIL_TO_RENEW`
        /// (`GRACE_PERIOD`). A renewal bought after it is `DID_RENEW` `BILLING_RECOVERY`.
        case billingFails(graceDays: Int)
        /// The period ended and no renewal comes (auto-renew off, or billing never recovered): `EXPIRED`
        /// `VOLUNTARY|BILLING_RETRY`.
        case expires
    }

    /// Applies `event` to the subscription whose original transaction is `original`: its latest transaction and
    /// its renewal information as Apple then signs them, in a notification kept in the notification history (what
    /// the server's history pull reads) and returned (what Apple would POST to `/v1/notify/appstore`).
    @discardableResult
    public func subscription(_ original: String, _ event: SubscriptionEvent) throws -> String {
        guard let latest = try transactions(ofChain: original)?.last, let payload = try payload(of: latest),
            let end = records.periodEnds[original], let productID = payload["productId"] as? String
        else { throw SandboxAppStoreError.unknownTransaction(original) }
        var fields = renewalFields(original: original, productID: productID)
        let renews = fields["autoRenewStatus"] as? Int != 0
        let retrying = fields["isInBillingRetryPeriod"] as? Bool == true
        let type: String
        var subtype: String?
        switch event {
        case .autoRenew(let on):
            fields["autoRenewStatus"] = on ? 1 : 0
            (type, subtype) = ("DID_CHANGE_RENEWAL_STATUS", on ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED")
        case .renewsTo(let product):
            fields["autoRenewProductId"] = product
            (type, subtype) = ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE")
        case .billingFails(let graceDays):
            guard clock.now() >= end else { throw SandboxAppStoreError.notDue(original, end) }
            guard renews, (0...60).contains(graceDays) else { throw SandboxAppStoreError.notBilled(original) }
            fields["isInBillingRetryPeriod"] = true
            fields.removeValue(forKey: "gracePeriodExpiresDate")
            if graceDays > 0 {
                fields["gracePeriodExpiresDate"] = Self.milliseconds(
                    end.addingTimeInterval(renewalRate.duration(days: graceDays)))
            }
            (type, subtype) = ("DID_FAIL_TO_RENEW", graceDays > 0 ? "GRACE_PERIOD" : nil)
        case .expires:
            guard clock.now() >= end else { throw SandboxAppStoreError.notDue(original, end) }
            guard !renews || retrying else { throw SandboxAppStoreError.stillRenews(original) }
            fields["expirationIntent"] = retrying ? 2 : 1
            fields["isInBillingRetryPeriod"] = false
            fields["autoRenewStatus"] = 0
            fields.removeValue(forKey: "gracePeriodExpiresDate")
            (type, subtype) = ("EXPIRED", retrying ? "BILLING_RETRY" : "VOLUNTARY")
        }
        return try announce(type, subtype: subtype, original: original, renewal: fields)
    }

    /// Signs notification `type` (`subtype`) carrying chain `original`'s latest transaction and renewal information
    /// `fields`, keeps both (the notification history, the journal) and posts it; returns it.
    func announce(_ type: String, subtype: String? = nil, original: String, renewal fields: [String: Any]) throws
        -> String
    {
        guard let latest = try transactions(ofChain: original)?.last, let kept = try kept(latest) else {
            throw SandboxAppStoreError.unknownTransaction(original)
        }
        let notification = try notification(
            type, subtype: subtype, signedTransaction: kept.signed, signedRenewalInfo: try sign(fields))
        try keep(
            KeptTransaction(
                id: latest, signed: kept.signed, payload: kept.payload, original: original,
                notification: notification, renewal: try Self.encode(fields)))
        return notification.payload
    }

    /// Whether the App Store takes `offer` for a purchase now, as StoreKit checks a promotional offer: signed with the
    /// merchant's In-App Purchase key (its key id) over Apple's string, for this app, within 24 hours of its
    /// timestamp.
    public func acceptsOffer(_ offer: AppStoreOfferSignature) -> Bool {
        guard let token = UUID(uuidString: offer.appAccountToken), let nonce = UUID(uuidString: offer.nonce) else {
            return false
        }
        return acceptsOffer(
            .signature(
                offerID: offer.offerID, keyID: offer.keyID, nonce: nonce, signature: offer.signature,
                timestamp: offer.timestamp),
            productID: offer.productID, appAccountToken: token)
    }

    /// Whether the App Store takes a purchase of `productID` by `appAccountToken` with `offer`, in either form StoreKit
    /// passes one.
    public func acceptsOffer(_ offer: SignedOffer, productID: String, appAccountToken: UUID?) -> Bool {
        switch offer {
        case .compactJWS(let offerID, let jws):
            return acceptsOffer(offerID, productID: productID, compactJWS: jws)
        case .signature(let offerID, let keyID, let nonce, let signature, let timestamp):
            // Apple's string: bundle id, key id, product, offer, application username (the token), nonce, timestamp,
            // each lowercased where Apple says so, joined by U+2063.
            guard let appAccountToken else { return false }
            let payload = [
                bundleID, keyID, productID, offerID, appAccountToken.uuidString.lowercased(),
                nonce.uuidString.lowercased(), String(timestamp),
            ].joined(separator: "\u{2063}")
            guard keyID == merchantKeyID, let der = Data(base64Encoded: signature),
                let signature = try? P256.Signing.ECDSASignature(derRepresentation: der),
                abs(Self.milliseconds(clock.now()) - timestamp) <= 24 * 3600 * 1000
            else { return false }
            return merchantKey.isValidSignature(signature, for: Data(payload.utf8))
        }
    }

    /// Whether the App Store takes promotional offer `offerID` for a purchase of `productID` in the compact-JWS form
    /// StoreKit takes (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`): ES256 over `header.payload` by the
    /// merchant's In-App Purchase key named in `kid`, with `aud` `promotional-offer`, this app's `bid`, the product and
    /// offer asked for, issued within the last 24 hours (Apple: "Generating JWS to sign App Store requests").
    public func acceptsOffer(_ offerID: String, productID: String, compactJWS: String) -> Bool {
        guard let claims = merchantSignedClaims(compactJWS, audience: "promotional-offer") else { return false }
        return claims["productId"] as? String == productID && claims["offerIdentifier"] as? String == offerID
    }

    /// A subscription's renewal information (`JWSRenewalInfoDecodedPayload`), signed: `fields` with Apple's names
    /// (`autoRenewStatus`, `isInBillingRetryPeriod`, `gracePeriodExpiresDate`…) over the chain's defaults, dated now
    /// unless `signedDate` is given.
    public func renewalInfo(originalTransactionID: String, productID: String, _ fields: [String: any Sendable] = [:])
        throws
        -> String
    {
        var payload: [String: Any] = [
            "originalTransactionId": originalTransactionID, "productId": productID, "autoRenewProductId": productID,
            "autoRenewStatus": 1, "signedDate": Self.milliseconds(clock.now()), "environment": "Sandbox",
            "recentSubscriptionStartDate": Self.milliseconds(clock.now()), "appTransactionId": "704330170000000001",
        ]
        for (name, value) in fields { payload[name] = value }
        return try sign(payload)
    }

    func sign(_ payload: [String: Any]) throws -> String { try signedJSON(payload).jws }

    /// `payload` signed, with the JSON text it signed (what the journal keeps of it).
    func signedJSON(_ payload: [String: Any]) throws -> (jws: String, json: String) {
        try nextSigner().signedJSON(payload: payload)
    }

    /// The authority that signs the next signed data: this store's, or a leaf a queued fault asks for.
    private func nextSigner() throws -> SandboxAppStoreCA {
        var signer = authority
        let now = clock.now()
        if faults.first == .expiredLeaf {
            faults.removeFirst()
            signer = try authority.withLeaf(validFrom: now - 2 * 365 * 86400, to: now - 365 * 86400)
        } else if faults.first == .revokedLeaf {
            faults.removeFirst()
            signer = try authority.withLeaf(validFrom: now - 86400, to: now + 365 * 86400)
            revokedSerials.insert(try signer.leafSerial)
        }
        return signer
    }

    // MARK: The App Store Server API

    /// Answers one request (path and query after the base URL).
    public func handle(method: String, pathAndQuery: String, headers: [String: String], body: [UInt8]) async
        -> ProviderHTTPResponse
    {
        if method == "POST", pathAndQuery.hasSuffix("/verifyReceipt") {
            return await verifyReceipt(body: body, atProduction: !pathAndQuery.hasSuffix("/sandbox/verifyReceipt"))
        }
        if method == "POST", pathAndQuery.hasSuffix("/ocsp") {
            return ocsp(body: body)
        }
        if let fault = faults.first, !Self.nonAPIFaults.contains(fault) {
            faults.removeFirst()
            switch fault {
            case .serverError:
                return Self.json(
                    500, #"{"errorCode":5000001,"errorMessage":"An unknown error occurred. Please try again."}"#)
            case .rateLimited(let seconds):
                var response = Self.json(429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
                response.headers["Retry-After"] = String(seconds)
                return response
            case .timeout(let delay):
                try? await Task.sleep(for: delay)
                return ProviderHTTPResponse(status: 504, headers: [:], body: [])
            case .expiredLeaf, .revokedLeaf, .ocspUnavailable, .receiptServerUnavailable: break
            }
        }
        serverAPIAttempts += 1
        switch serverAPIState {
        case .up: break
        case .unreachable:
            // The caller's own timeout ends the wait (a task cancelled); a caller without one waits a minute.
            try? await Task.sleep(for: .seconds(60))
            return ProviderHTTPResponse(status: 504, headers: [:], body: [])
        case .slow(let delay): try? await Task.sleep(for: delay)
        }
        guard authorized(headers) else { return Self.json(401, "") }
        let (path, query) = PathAndQuery.split(pathAndQuery)
        let segments = path.split(separator: "/").map(String.init)
        if let limited = rateLimited() { return limited }
        let api = segments.suffix(from: segments.firstIndex(of: "inApps") ?? segments.count)
        let endpoint = api.dropFirst(2).first ?? path
        if let refusedFrom = refusals[endpoint], serverAPICalls[endpoint, default: 0] >= refusedFrom {
            return Self.json(401, "")
        }
        serverAPICalls[endpoint, default: 0] += 1
        do {
            switch (
                method,
                Array(segments.suffix(from: min(segments.count, segments.firstIndex(of: "inApps") ?? segments.count)))
            ) {
            case ("GET", let s) where s.count == 4 && s[1] == "v1" && s[2] == "transactions":
                guard let signed = try signedTransaction(s[3]) else { return Self.notFound }
                return Self.json(200, try Self.encode(["signedTransactionInfo": signed]))
            case ("GET", let s) where s.count == 4 && s[2] == "history":
                guard
                    let ids = try history(
                        of: s[3], from: query["startDate"].flatMap { Int64($0) },
                        until: query["endDate"].flatMap { Int64($0) })
                else { return Self.notFound }
                guard let start = PathAndQuery.position(query["revision"]) else {
                    return Self.json(400, #"{"errorCode":4000005,"errorMessage":"Invalid revision."}"#)
                }
                let page = Array(ids.dropFirst(start).prefix(2))
                let end = start + page.count
                return Self.json(
                    200,
                    try Self.encode([
                        "signedTransactions": try page.compactMap(signedTransaction), "revision": String(end),
                        "hasMore": end < ids.count,
                        "bundleId": bundleID, "appAppleId": appAppleID, "environment": "Sandbox",
                    ]))
            case ("POST", let s) where s == ["inApps", "v1", "notifications", "history"]:
                let request = try JSONObject(body)
                let (from, to) = (try request.int("startDate"), try request.int("endDate"))
                let matching = records.notifications.filter { $0.signedDate >= from && $0.signedDate <= to }.map(\.ref)
                guard let start = PathAndQuery.position(query["paginationToken"]) else {
                    return Self.json(400, #"{"errorCode":4000006,"errorMessage":"Invalid pagination token."}"#)
                }
                let page = Array(matching.dropFirst(start).prefix(2))
                let end = start + page.count
                var answer: [String: Any] = [
                    "notificationHistory": try page.map {
                        [
                            "signedPayload": try journal.read($0).notification?.payload ?? "",
                            "sendAttempts": [] as [Any],
                        ]
                    },
                    "hasMore": end < matching.count,
                ]
                if end < matching.count { answer["paginationToken"] = String(end) }
                return Self.json(200, try Self.encode(answer))
            case ("POST", let s) where s == ["inApps", "v1", "notifications", "test"]:
                let token = UUID().uuidString.lowercased()
                testNotifications[token] = try notification(type: "TEST", signedTransaction: nil)
                return Self.json(200, try Self.encode(["testNotificationToken": token]))
            case ("GET", let s) where s.count == 5 && s[2] == "notifications" && s[3] == "test":
                guard let payload = testNotifications[s[4]] else { return Self.notFound }
                return Self.json(
                    200,
                    try Self.encode([
                        "signedPayload": payload,
                        "sendAttempts": [
                            ["attemptDate": Self.milliseconds(clock.now()), "sendAttemptResult": "SUCCESS"]
                        ],
                    ]))
            case ("GET", let s) where s.count == 4 && s[2] == "lookup":
                return Self.json(
                    200,
                    try Self.encode([
                        "status": records.count == 0 ? 1 : 0,
                        "signedTransactions": try records.first.flatMap(signedTransaction).map { [$0] } ?? [],
                    ]))
            case ("GET", let s) where s.count == 5 && s[2] == "refund":
                return Self.json(
                    200, try Self.encode(["signedTransactions": [] as [String], "revision": "0", "hasMore": false]))
            case ("PUT", let s) where s.count == 5 && s[2] == "transactions" && s[3] == "consumption":
                guard records.line(of: s[4]) != nil else { return Self.notFound }
                guard (try? JSONObject(body).optionalBool("customerConsented")) == true else {
                    return Self.json(400, #"{"errorCode":4000130,"errorMessage":"Invalid customer consented."}"#)
                }
                consumptionReports[s[4]] = body
                return ProviderHTTPResponse(status: 202, headers: [:], body: [])
            default:
                return Self.json(404, #"{"errorCode":4040000,"errorMessage":"Not found."}"#)
            }
        } catch {
            return Self.json(400, #"{"errorCode":4000000,"errorMessage":"Invalid request."}"#)
        }
    }

    /// `verifyReceipt`: the sandbox's receipts are sandbox receipts, so the production endpoint answers 21007.
    /// The OCSP responder for the authority's leaves (RFC 6960 over HTTP POST).
    private func ocsp(body: [UInt8]) -> ProviderHTTPResponse {
        if faults.first == .ocspUnavailable {
            faults.removeFirst()
            return ProviderHTTPResponse(status: 503, headers: [:], body: [])
        }
        guard let responder = try? authority.ocspResponder else {
            return ProviderHTTPResponse(status: 500, headers: [:], body: [])
        }
        return ProviderHTTPResponse(
            status: 200, headers: ["Content-Type": "application/ocsp-response"],
            body: responder.respond(to: body, revokedSerials: revokedSerials, now: clock.now()))
    }

    private func verifyReceipt(body: [UInt8], atProduction: Bool) async -> ProviderHTTPResponse {
        if faults.first == .receiptServerUnavailable {
            faults.removeFirst()
            return Self.json(200, #"{"status":21005,"is-retryable":true}"#)
        }
        guard let request = try? JSONObject(body), let data = try? request.string("receipt-data"),
            let der = try? ReceiptParser.bytes(Array(data.utf8))
        else { return Self.json(200, #"{"status":21002}"#) }
        if let sharedSecret, (try? request.optionalString("password")) != sharedSecret {
            return Self.json(200, #"{"status":21004}"#)
        }
        if atProduction { return Self.json(200, #"{"status":21007}"#) }
        guard let roots = try? AppleRootCertificates.load([receipts.rootDER], requireApple: false),
            case .valid(let receipt)? = try? await ReceiptValidator(rootCertificates: roots).validate(der)
        else { return Self.json(200, #"{"status":21003}"#) }
        let answer: [String: Any] = [
            "status": 0, "environment": "Sandbox", "receipt": receipt.json,
            "latest_receipt_info": receipt.inApp.map(\.json),
            "latest_receipt": data,
        ]
        return Self.json(200, (try? Self.encode(answer)) ?? #"{"status":21009}"#)
    }

    /// The merchant's bearer token: ES256 by the configured key, `aud` appstoreconnect-v1, our bundle, not expired.
    private func authorized(_ headers: [String: String]) -> Bool {
        guard
            let value = headers.first(where: { $0.key.caseInsensitiveCompare("Authorization") == .orderedSame })?.value,
            value.hasPrefix("Bearer ")
        else { return false }
        let parts = value.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(ArraySlice(parts[0].utf8)),
            let claimsBytes = Base64URL.decode(ArraySlice(parts[1].utf8)),
            let signatureBytes = Base64URL.decode(ArraySlice(parts[2].utf8)),
            let header = try? JSONObject(headerBytes), let claims = try? JSONObject(claimsBytes),
            (try? header.string("alg")) == "ES256", (try? header.string("kid")) == merchantKeyID,
            (try? claims.string("aud")) == "appstoreconnect-v1", (try? claims.string("bid")) == bundleID,
            let expiry = try? claims.int("exp"), expiry > Int64(clock.now().timeIntervalSince1970),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return false }
        return merchantKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
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

public enum SandboxAppStoreError: Error, CustomStringConvertible {
    case unknownTransaction(String)
    case badPeriod(String)
    case tooMany(Int, limit: Int)
    case notDue(String, Date)
    case notBilled(String)
    case stillRenews(String)
    case badEvent(String)

    public var description: String {
        switch self {
        case .tooMany(let count, let limit): "\(count) transactions asked for; 0 to \(limit) at a time"
        case .unknownTransaction(let id): "no transaction \(id)"
        case .badPeriod(let text): "'\(text)' is not a period like P7D, P1M or P1Y"
        case .notDue(let id, let end):
            "subscription \(id)'s period runs until \(end): nothing is billed or ended before"
        case .notBilled(let id): "subscription \(id) does not renew (auto-renew is off): nothing is billed"
        case .stillRenews(let id): "subscription \(id) renews: turn auto-renew off or fail its billing first"
        case .badEvent(let event):
            "'\(event.prefix(32))' is not auto_renew_on, auto_renew_off, renews_to, billing_fails or expires"
        }
    }
}
