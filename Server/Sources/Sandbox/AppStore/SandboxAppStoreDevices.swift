import AppStore
import ChannelSupport
import Foundation
import OrderSafeModel

/// The sandbox App Store in the role of each device's StoreKit daemon: purchases made on a device stay in its
/// queue of unfinished transactions until the app finishes them, and are delivered again at every launch (as
/// `Transaction.unfinished`, and once through `Transaction.updates`), exactly as on iOS; Ask to Buy purchases wait
/// for a parent's approval and then arrive as updates; refunds and renewals reach the device as updates too.
/// With a folder, devices outlive the process as a phone outlives the merchant's server: what each bought is the
/// store's record, what each finished, heard and waits for is this journal's, and ``restore()`` rebuilds them.
public actor SandboxAppStoreDevices {
    /// A product as a device's StoreKit describes it.
    public struct DeviceProduct: Sendable, Hashable {
        public var id: String
        /// `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
        public var type: String
        public var displayName: String
        public var price: Money
        /// An auto-renewable subscription's terms (`Product.SubscriptionInfo`).
        public var subscription: SubscriptionTerms?

        public init(id: String, type: String, displayName: String, price: Money, subscription: SubscriptionTerms? = nil)
        {
            self.id = id
            self.type = type
            self.displayName = displayName
            self.price = price
            self.subscription = subscription
        }
    }

    /// An auto-renewable subscription as App Store Connect has it set up: its group and period, the introductory
    /// offer, and the promotional and win-back offers with what their first period costs.
    public struct SubscriptionTerms: Sendable, Hashable {
        public var groupID: String
        public var period: GrantPeriod
        public var introductoryOffer: IntroductoryOffer?
        public var promotionalOffers: [OfferTerms]
        public var winBackOffers: [OfferTerms]

        public init(
            groupID: String, period: GrantPeriod, introductoryOffer: IntroductoryOffer? = nil,
            promotionalOffers: [OfferTerms] = [], winBackOffers: [OfferTerms] = []
        ) {
            self.groupID = groupID
            self.period = period
            self.introductoryOffer = introductoryOffer
            self.promotionalOffers = promotionalOffers
            self.winBackOffers = winBackOffers
        }
    }

    /// A promotional or win-back offer: its id, and what its first period (the subscription's own) costs.
    public struct OfferTerms: Sendable, Hashable {
        public var id: String
        public var price: Money

        public init(id: String, price: Money) {
            self.id = id
            self.price = price
        }
    }

    /// What a device's purchase sheet ended in.
    public enum PurchaseResult: Sendable, Hashable {
        case success(signed: String)
        case pending(requestID: String)
        case userCancelled
        case productUnavailable
        /// The promotional offer's signature is not the merchant's, or not for this product and offer
        /// (`Product.PurchaseError.invalidOfferSignature`).
        case invalidOfferSignature
    }

    struct Device {
        var unfinished: [String: String] = [:]
        /// Every transaction ever delivered to the device, by id (their latest signed form).
        var all: [String: (type: String, signed: String)] = [:]
        var updates: [String] = []
        var askToBuy: [String: (productID: String, token: UUID?)] = [:]
        /// Purchases the user started on the App Store, waiting for the app (`PurchaseIntent.intents`).
        var intents: [PurchaseIntent] = []
    }

    static let maxDevices = 100_000
    static let maxIntentsPerDevice = 100
    static let maxUpdatesPerDevice = 10_000

    let store: SandboxAppStore
    private var products: [String: DeviceProduct] = [:]
    var devices: [String: Device] = [:]
    /// Which device bought each transaction (refunds and renewals go back to it, and to every device of its Apple ID).
    private var owners: [String: String] = [:]
    /// The Apple ID each device is signed in to the App Store with, where a test said so (otherwise its own), and the
    /// devices of each such Apple ID.
    private var appleIDs: [String: String] = [:]
    private var members: [String: Set<String>] = [:]
    /// The scene each transaction's purchase sheet was shown over (`purchase(confirmIn:)`), when one was named.
    private var scenes: [String: String] = [:]
    /// Each Apple ID's download of the app: the version it first had and when (``appTransaction(device:)``; kept for
    /// the process's life: a restarted sandbox dates the download anew).
    var appDownloads: [String: (version: String, downloadedAt: Int64?)] = [:]
    private let journal: SandboxJournal<SandboxDeviceRecord>
    /// What the journal held at start, until ``restore()`` applies it.
    private var toRestore: [SandboxDeviceRecord]?

    /// - Parameter folder: where the devices' queues are kept across restarts; nil keeps nothing.
    public init(store: SandboxAppStore, folder: URL? = nil) throws {
        self.store = store
        if let folder {
            (journal, toRestore) = try SandboxJournal<SandboxDeviceRecord>.open(
                folder.appendingPathComponent("appstore-devices.journal"))
        } else {
            journal = .inMemory
        }
    }

    /// Rebuilds every device as it was when the process before this one stopped: the transactions each bought
    /// (unfinished unless finished since), the updates each was sent, its Ask to Buy requests. Call it once at
    /// start, before the devices are used; later calls do nothing.
    public func restore() async throws {
        guard let records = toRestore else { return }
        let bought = try await store.deviceTransactions()
        guard toRestore != nil else { return }
        toRestore = nil
        for (id, device, type, signed) in bought {
            owners[id] = device
            devices[device, default: Device()].unfinished[id] = signed
            devices[device]?.all[id] = (type, signed)
        }
        for record in records {
            switch record {
            case .finished(let device, let id): devices[device]?.unfinished[id] = nil
            case .update(let device, let signed): devices[device, default: Device()].updates.append(signed)
            case .delivered(let device, let id, let type, let signed):
                var queue = devices[device] ?? Device()
                queue.unfinished[id] = signed
                queue.all[id] = (type, signed)
                queue.updates.append(signed)
                devices[device] = queue
            case .appleID(let device, let appleID): join(device, appleID)
            case .askToBuy(let device, let requestID, let productID, let token):
                devices[device, default: Device()].askToBuy[requestID] = (productID, token)
            case .answered(let device, let requestID, let update):
                devices[device]?.askToBuy[requestID] = nil
                if let update { devices[device, default: Device()].updates.append(update) }
            }
        }
    }

    public func setProducts(_ products: [DeviceProduct]) {
        self.products = Dictionary(products.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The products among `ids` the store sells (unknown ids are left out, as StoreKit does).
    public func products(_ ids: [String]) -> [DeviceProduct] {
        ids.compactMap { products[$0] }
    }

    /// The purchase sheet: `confirm` false is the user cancelling; `askToBuy` makes it wait for approval; `scene` is
    /// the scene the app showed it over (`purchase(confirmIn:)`), kept with the transaction.
    public func purchase(
        device: String, productID: String, appAccountToken: UUID?, askToBuy: Bool, confirm: Bool, scene: String? = nil,
        offer: SignedOffer? = nil, introductoryEligibility: String? = nil
    ) async throws -> PurchaseResult {
        try admit(device)
        guard products[productID] != nil else { return .productUnavailable }
        if let offer, !(await store.acceptsOffer(offer, productID: productID, appAccountToken: appAccountToken)) {
            return .invalidOfferSignature
        }
        guard confirm else { return .userCancelled }
        if askToBuy {
            let requestID = UUID().uuidString.lowercased()
            try journal.append(
                .askToBuy(device: device, requestID: requestID, productID: productID, token: appAccountToken))
            devices[device, default: Device()].askToBuy[requestID] = (productID, appAccountToken)
            return .pending(requestID: requestID)
        }
        let introductory = await introductoryOffer(
            productID: productID, device: device, promotional: offer != nil, signedEligibility: introductoryEligibility)
        let signed = try await charge(
            device: device, productID: productID, appAccountToken: appAccountToken, offer: offer?.offerID,
            introductory: introductory)
        if let scene, let id = Self.transactionID(signed) { scenes[id] = scene }
        return .success(signed: signed)
    }

    /// The user taps a promoted in-app purchase on the App Store product page (or a win-back offer): the App Store
    /// opens the app and hands it a `PurchaseIntent` for the product; nothing is charged until the app buys it.
    /// Like the App Store app, the queue does not outlive a restart: an intent lost is tapped again.
    /// With `offer`, the user tapped that offer of the product (iOS 18's `PurchaseIntent.offer`): a win-back offer
    /// in the App Store's own listing, or a promotional offer the App Store promotes.
    public func promote(device: String, productID: String, offer: PromotedOffer? = nil) throws {
        try admit(device)
        guard let product = products[productID] else { throw SandboxDeviceError.unknownProduct(productID) }
        if let offer {
            // Only an offer App Store Connect lists for the product can be tapped on the App Store.
            let listed =
                switch offer.kind {
                case .promotional: product.subscription?.promotionalOffers
                case .winBack: product.subscription?.winBackOffers
                }
            guard listed?.contains(where: { $0.id == offer.id }) == true else {
                throw SandboxDeviceError.badOffer("\(productID) has no \(offer.kind.rawValue) offer '\(offer.id)'")
            }
        }
        guard devices[device]!.intents.count < Self.maxIntentsPerDevice else { throw SandboxDeviceError.tooMany }
        devices[device]!.intents.append(PurchaseIntent(productID: productID, offer: offer))
    }

    /// A purchase the user started on the App Store, waiting for the app.
    public struct PurchaseIntent: Sendable, Hashable {
        public var productID: String
        public var offer: PromotedOffer?
    }

    /// The offer a purchase intent carries: its id in App Store Connect and StoreKit's offer type.
    public struct PromotedOffer: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            case promotional
            case winBack = "win_back"
        }
        public var id: String
        public var kind: Kind

        public init(id: String, kind: Kind) {
            self.id = id
            self.kind = kind
        }
    }

    /// The intents waiting for the app, each answered once.
    public func takePurchaseIntents(device: String) -> [PurchaseIntent] {
        guard let intents = devices[device]?.intents, !intents.isEmpty else { return [] }
        devices[device]!.intents = []
        return intents
    }

    /// A parent approves (or declines) an Ask to Buy request: approved, the transaction is charged and arrives
    /// as an update. Returns the transaction id, nil when declined.
    /// With `keepingToken` false the approved transaction carries no `appAccountToken`: the purchase completes on
    /// the parent's approval, and nothing in StoreKit's documentation promises that the child's purchase options
    /// survive it, so a phone no kinder than reality must not count on the token (the app matches it by product).
    public func answerAskToBuy(device: String, requestID: String, approve: Bool, keepingToken: Bool = true)
        async throws -> String?
    {
        guard let request = devices[device]?.askToBuy.removeValue(forKey: requestID) else {
            throw SandboxDeviceError.unknownRequest(requestID)
        }
        guard approve else {
            try journal.append(.answered(device: device, requestID: requestID, update: nil))
            return nil
        }
        let signed = try await charge(
            device: device, productID: request.productID, appAccountToken: keepingToken ? request.token : nil)
        try journal.append(.answered(device: device, requestID: requestID, update: signed))
        devices[device]?.updates.append(signed)
        return Self.transactionID(signed)
    }

    /// How a transaction made outside the app reaches a device. StoreKit delivers these through `Transaction.updates`
    /// ("transactions that occur outside the app or on other devices … Ask to Buy transactions, offer code
    /// redemptions, purchases … in the App Store": Apple's `Transaction.updates` page), and until the app finishes
    /// them they are unfinished, so an app that was closed meets them at its next launch.
    public enum Elsewhere: Sendable, Hashable {
        /// The same Apple ID bought it on another device, with the `appAccountToken` that device's app gave (an
        /// order of the app's), or none (an app that gave none).
        case otherDevice(appAccountToken: UUID?)
        /// Another member of the family bought a non-consumable or a subscription: `inAppOwnershipType`
        /// FAMILY_SHARED, and no token of this app's.
        case familyShared
        /// An offer code redeemed in the App Store app, with the offer's reference name: no token.
        case offerCode(String)
        /// An auto-renewable subscription renewed: the chain's original transaction id; the renewal carries the
        /// original's token.
        case renewal(originalTransactionID: String)
    }

    /// A transaction made outside the app arrives on `device` (see ``Elsewhere``). Returns its transaction id.
    public func deliverFromElsewhere(device: String, productID: String, _ elsewhere: Elsewhere) async throws -> String {
        try admit(device)
        guard let product = products[productID] else { throw SandboxDeviceError.unknownProduct(productID) }
        var token: UUID?
        var original: String?
        var offer: String?
        var familyShared = false
        switch elsewhere {
        case .otherDevice(let appAccountToken):
            token = appAccountToken
        case .familyShared:
            // Consumables are never shared (Apple: Family Sharing covers non-consumables and subscriptions).
            guard product.type != ProductType.consumable.rawValue else {
                throw SandboxDeviceError.notShareable(productID)
            }
            familyShared = true
        case .offerCode(let code):
            offer = code
        case .renewal(let originalTransactionID):
            guard product.type == SandboxAppStore.autoRenewable else {
                throw SandboxDeviceError.notRenewable(productID)
            }
            token = try await store.chainToken(of: originalTransactionID)
            original = originalTransactionID
        }
        let (id, signed) = try await store.purchase(
            productID: productID, type: product.type, appAccountToken: token, originalTransactionID: original,
            familyShared: familyShared,
            offerCode: offer, device: device)
        try journal.append(.update(device: device, signed: signed))
        owners[id] = device
        devices[device]?.unfinished[id] = signed
        devices[device]?.all[id] = (product.type, signed)
        devices[device]?.updates.append(signed)
        if case .renewal = elsewhere {
            // A renewal reaches every device of the Apple ID (Transaction.updates there), unfinished on each.
            for other in sharingAppleID(with: device).dropFirst() {
                try journal.append(.delivered(device: other, id: id, type: product.type, signed: signed))
                devices[other, default: Device()].unfinished[id] = signed
                devices[other]?.all[id] = (product.type, signed)
                devices[other]?.updates.append(signed)
            }
        }
        return id
    }

    /// The Ask to Buy requests waiting for a parent: request id and product id.
    public func askToBuyRequests(device: String) -> [(requestID: String, productID: String)] {
        (devices[device]?.askToBuy ?? [:]).map { ($0.key, $0.value.productID) }.sorted { $0.requestID < $1.requestID }
    }

    /// The device's unfinished transactions, oldest first (the order StoreKit's `Transaction.unfinished` lists them
    /// in here: the same every time).
    public func unfinished(device: String) -> [String] {
        (devices[device]?.unfinished ?? [:]).sorted { ($0.key.count, $0.key) < ($1.key.count, $1.key) }.map(\.value)
    }

    /// Non-consumables and subscriptions the device holds and that were not refunded.
    /// As StoreKit's `Transaction.currentEntitlements`: non-consumables and non-renewing subscriptions not revoked,
    /// and of each auto-renewable subscription only its latest transaction, while it has not expired ("the latest
    /// transaction for each active auto-renewable subscription": Apple's `currentEntitlements` page). No consumable.
    public func entitlements(device: String) -> [String] {
        guard let all = devices[device]?.all else { return [] }
        let now = Int64((store.clock.now().timeIntervalSince1970 * 1000).rounded(.down))
        // Per original transaction: the latest by purchase date, then by id (a renewal made the same millisecond).
        var latest: [String: (purchased: Int64, id: Int64, signed: String)] = [:]
        var entitled: [String] = []
        for (type, signed) in all.values where type != "Consumable" {
            guard let payload = Self.payload(signed), payload["revocationDate"] == nil else { continue }
            guard type == SandboxAppStore.autoRenewable else {
                entitled.append(signed)
                continue
            }
            let original = payload["originalTransactionId"] as? String ?? ""
            let purchased = (payload["purchaseDate"] as? NSNumber)?.int64Value ?? 0
            let id = (payload["transactionId"] as? String).flatMap { Int64($0) } ?? 0
            if let kept = latest[original], (kept.purchased, kept.id) >= (purchased, id) { continue }
            latest[original] = (purchased, id, signed)
        }
        for (_, newest) in latest {
            guard let payload = Self.payload(newest.signed),
                let expires = (payload["expiresDate"] as? NSNumber)?.int64Value, expires > now
            else { continue }
            entitled.append(newest.signed)
        }
        return entitled
    }

    /// Updates after `cursor`; without one (a launch), the unfinished transactions, and the newest cursor.
    public func updates(device: String, after cursor: Int?) -> (signed: [String], cursor: Int) {
        let log = devices[device]?.updates ?? []
        guard let cursor else { return (unfinished(device: device), log.count) }
        let start = min(max(cursor, 0), log.count)
        return (Array(log[start...]), log.count)
    }

    /// The app finished the transaction: it leaves the queue for good.
    public func finish(device: String, transactionID: String) throws {
        guard devices[device]?.unfinished[transactionID] != nil else { return }
        try journal.append(.finished(device: device, id: transactionID))
        devices[device]?.unfinished.removeValue(forKey: transactionID)
    }

    /// Apple refunds a transaction: every device of the buyer's Apple ID hears of it through updates (whoever is
    /// signed in to the app there).
    public func refund(transactionID: String) async throws {
        let signed = try await store.refund(transactionID: transactionID)
        guard let owner = owners[transactionID] else { return }
        for device in sharingAppleID(with: owner) {
            try journal.append(.update(device: device, signed: signed))
            devices[device, default: Device()].updates.append(signed)
            if let type = devices[device]?.all[transactionID]?.type {
                devices[device]?.all[transactionID] = (type, signed)
            }
        }
    }

    /// The user signs in to the App Store on `device` with `appleID` (Settings → Media & Purchases): what that Apple
    /// ID buys elsewhere, renews or has refunded reaches this device too, whoever is signed in to the app on it.
    public func signIn(device: String, appleID: String) throws {
        try admit(device)
        guard (1...64).contains(appleID.utf8.count) else { throw SandboxDeviceError.badAppleID }
        try journal.append(.appleID(device: device, appleID: appleID))
        join(device, appleID)
    }

    private func join(_ device: String, _ appleID: String) {
        if let previous = appleIDs[device] { members[previous]?.remove(device) }
        appleIDs[device] = appleID
        members[appleID, default: []].insert(device)
    }

    /// The Apple ID `device` is signed in to the App Store with (its own, unless a test said otherwise).
    func appleID(of device: String) -> String {
        appleIDs[device] ?? device
    }

    /// `device` and every other device signed in to its Apple ID, in a stable order.
    func sharingAppleID(with device: String) -> [String] {
        guard let appleID = appleIDs[device], let all = members[appleID] else { return [device] }
        return [device] + all.subtracting([device]).sorted()
    }

    /// The transactions still unfinished on any device (a chaos run expects none at its end).
    public var unfinishedCount: Int {
        devices.values.reduce(0) { $0 + $1.unfinished.count }
    }

    /// Every purchase the sandbox App Store made.
    public func payments() async throws -> [SandboxPaymentRecord] {
        try await store.payments
    }

    /// Which device bought each transaction.
    public var purchasingDevices: [String: String] { owners }

    /// The scene each purchase was confirmed in, by transaction id.
    public var purchaseScenes: [String: String] { scenes }

    private func charge(
        device: String, productID: String, appAccountToken: UUID?, offer: String? = nil,
        introductory: IntroductoryOffer? = nil
    ) async throws -> String {
        let type = products[productID]?.type ?? "Consumable"
        let (id, signed) = try await store.purchase(
            productID: productID, type: type, appAccountToken: appAccountToken,
            subscriptionPeriod: products[productID]?.subscription?.period, promotionalOffer: offer,
            introductoryOffer: introductory, device: device)
        owners[id] = device
        devices[device, default: Device()].unfinished[id] = signed
        devices[device]?.all[id] = (type, signed)
        return signed
    }

    /// The introductory offer a purchase of `productID` on `device` gets: the product's, unless a promotional or
    /// win-back offer comes with it, and only for an eligible customer: as the merchant's signed word says when it
    /// came with the purchase and the App Store takes it (iOS 18.4), else when no device of the Apple ID ever bought
    /// a subscription of the product's group (Apple: "new subscribers").
    private func introductoryOffer(productID: String, device: String, promotional: Bool, signedEligibility: String?)
        async -> IntroductoryOffer?
    {
        guard !promotional, let terms = products[productID]?.subscription, let offer = terms.introductoryOffer else {
            return nil
        }
        if let signedEligibility,
            let allowed = await store.introductoryEligibility(productID: productID, compactJWS: signedEligibility)
        {
            return allowed ? offer : nil
        }
        let groupProducts = Set(products.values.filter { $0.subscription?.groupID == terms.groupID }.map(\.id))
        for member in sharingAppleID(with: device) {
            for (_, bought) in devices[member]?.all ?? [:] where bought.type == SandboxAppStore.autoRenewable {
                guard let product = Self.payload(bought.signed)?["productId"] as? String else { continue }
                if groupProducts.contains(product) { return nil }
            }
        }
        return offer
    }

    /// 1 to 64 ASCII letters, digits, `-` or `_`.
    static func isDeviceID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    private func admit(_ device: String) throws {
        guard Self.isDeviceID(device) else { throw SandboxDeviceError.badDevice }
        if devices[device] == nil {
            guard devices.count < Self.maxDevices else { throw SandboxDeviceError.tooMany }
            devices[device] = Device()
        }
        guard devices[device]!.updates.count < Self.maxUpdatesPerDevice else { throw SandboxDeviceError.tooMany }
    }

    static func transactionID(_ signed: String) -> String? {
        payload(signed)?["transactionId"] as? String
    }

    static func isRevoked(_ signed: String) -> Bool {
        payload(signed)?["revocationDate"] != nil
    }

    static func payload(_ signed: String) -> [String: Any]? {
        let parts = signed.split(separator: ".")
        guard parts.count == 3, let data = Base64URL.decode(ArraySlice(parts[1].utf8)) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(data))) as? [String: Any]
    }
}

public enum SandboxDeviceError: Error, CustomStringConvertible {
    case badDevice
    case badToken(String)
    case tooMany
    case unknownRequest(String)
    case unknownProduct(String)
    case notShareable(String)
    case notRenewable(String)
    case badDelivery(String)
    case badScene
    case badOffer(String)
    case badAppleID

    public var description: String {
        switch self {
        case .badDevice: "a device id is 1 to 64 ASCII letters, digits, '-' or '_'"
        case .badToken(let text): "app_account_token '\(text.prefix(64))' is not a UUID"
        case .tooMany: "too many devices or updates in this sandbox"
        case .unknownRequest(let id): "no Ask to Buy request \(id)"
        case .unknownProduct(let id): "the store sells no product '\(id.prefix(64))'"
        case .notShareable(let id):
            "'\(id.prefix(64))' is a consumable: Family Sharing shares non-consumables and subscriptions only"
        case .notRenewable(let id):
            "'\(id.prefix(64))' is not an auto-renewable subscription's original transaction or product"
        case .badDelivery(let reason): reason
        case .badScene: "scene must be 1 to 64 bytes"
        case .badOffer(let reason): "promotional_offer: \(reason)"
        case .badAppleID: "apple_id must be 1 to 64 bytes"
        }
    }
}

/// One line of the devices' journal (``SandboxJournal``); what each device bought is the store's own record.
enum SandboxDeviceRecord: Codable {
    /// The app finished a transaction.
    case finished(device: String, id: String)
    /// A transaction sent to the device as an update (a refund, a purchase made elsewhere).
    case update(device: String, signed: String)
    /// An Ask to Buy request waits for a parent.
    case askToBuy(device: String, requestID: String, productID: String, token: UUID?)
    /// A parent answered it: approved, the transaction then charged arrives as an update.
    case answered(device: String, requestID: String, update: String?)
    /// A transaction another device of the same Apple ID made (a renewal), delivered to this one, unfinished.
    case delivered(device: String, id: String, type: String, signed: String)
    /// The device signed in to the App Store with this Apple ID.
    case appleID(device: String, appleID: String)
}
