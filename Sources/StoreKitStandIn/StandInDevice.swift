import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store behind the stand-in types: on a device, StoreKit's daemon; here, the sandbox App Store's per-device
/// queue (`/sandbox/appstore/devices/{device}/…` on `ordersafe serve`), where transactions stay unfinished until
/// the app finishes them and are delivered again at every launch, exactly as on iOS.
public final class StandInDevice: Sendable {
    /// How often `Transaction.updates` asks the device queue for news.
    public static let updatePollInterval = Duration.milliseconds(200)

    public let server: URL
    public let deviceID: String
    /// What the user does on the purchase sheet: confirm, or cancel.
    public let confirmsPurchases: Bool
    /// Ask to Buy: every purchase waits for a parent's approval (`.pending`).
    public let asksToBuy: Bool
    /// The process gets SIGKILL right after the store charged, before `purchase` returns (for demonstrations).
    public let killedAfterCharge: Bool
    /// What a real iPhone does that a kind simulator would not.
    public struct Unkindness: Sendable {
        /// Parental controls forbid payments (`AppStore.canMakePayments` is false).
        public var paymentsNotAllowed = false
        /// Purchases are interrupted after the charge ("Confirmation required"): `purchase` throws
        /// `StoreKitError.unknown`, and the transaction waits, unfinished, for the next launch's sweep.
        public var interruptsPurchases = false
        /// The purchase sheet answers `userCancelled` although the App Store charged (StoreKit on iOS 18 has:
        /// RevenueCat purchases-ios #4903): the transaction waits, unfinished.
        public var cancelsAfterCharge = false
        /// `AppStore.sync()` fails: the user cancels the App Store sign-in, or the network is down.
        public var syncFailure: StoreKitError?
        /// StoreKit cannot verify the transactions on this device: every one comes as `.unverified` with this error
        /// (a device whose verification data does not match, a jailbreak tweak; Apple's forums count false positives
        /// among them: developer.apple.com/forums/thread/773604), although the App Store signed them.
        public var deviceVerificationFailure: VerificationResult<Transaction>.VerificationError?
        /// The user closes Apple's refund request sheet without sending the request.
        public var cancelsRefundRequests = false
        /// Verification failing for some transactions only (a receipt refreshed midway, a jailbreak tweak hooking
        /// some calls): the error StoreKit reports for the transaction of this id, or nil when it verifies.
        public var transactionVerificationFailure:
            (@Sendable (UInt64) -> VerificationResult<Transaction>.VerificationError?)?

        public init(
            paymentsNotAllowed: Bool = false, interruptsPurchases: Bool = false, syncFailure: StoreKitError? = nil,
            deviceVerificationFailure: VerificationResult<Transaction>.VerificationError? = nil,
            cancelsRefundRequests: Bool = false, cancelsAfterCharge: Bool = false,
            transactionVerificationFailure: (
                @Sendable (UInt64) -> VerificationResult<Transaction>.VerificationError?
            )? = nil
        ) {
            self.cancelsRefundRequests = cancelsRefundRequests
            self.cancelsAfterCharge = cancelsAfterCharge
            self.transactionVerificationFailure = transactionVerificationFailure
            self.paymentsNotAllowed = paymentsNotAllowed
            self.interruptsPurchases = interruptsPurchases
            self.syncFailure = syncFailure
            self.deviceVerificationFailure = deviceVerificationFailure
        }
    }

    public let unkindness: Unkindness
    /// The App Store storefront the device buys in (`Storefront.current`; China mainland's, Apple's id 143465,
    /// unless told otherwise); nil: signed out of the App Store.
    public var storefront: Storefront? { storefronts.withLock { $0.current } }
    /// The storefront now and who follows its changes (`Storefront.updates`).
    private let storefronts: Mutex<(current: Storefront?, followers: [UUID: AsyncStream<Storefront>.Continuation])>
    private let session: URLSession
    private let sheets = NSLock()
    nonisolated(unsafe) private var shown: [(sheet: String, scene: String)] = []

    /// The App Store sheets shown on this device, oldest first: the sheet (`manage_subscriptions[:group]`,
    /// `refund_request:<transaction id>`) and the scene's title.
    public var sheetsShown: [(sheet: String, scene: String)] { sheets.withLock { shown } }

    func showSheet(_ sheet: String, scene: String) {
        sheets.withLock { shown.append((sheet, scene)) }
    }

    public init(
        server: URL, deviceID: String, confirmsPurchases: Bool = true, asksToBuy: Bool = false,
        killedAfterCharge: Bool = false,
        unkindness: Unkindness = Unkindness(),
        storefront: (countryCode: String, id: String)? = ("CHN", "143465")
    ) {
        storefronts = Mutex((storefront.map { Storefront(countryCode: $0.countryCode, id: $0.id) }, [:]))
        self.server = server
        self.deviceID = deviceID
        self.confirmsPurchases = confirmsPurchases
        self.asksToBuy = asksToBuy
        self.killedAfterCharge = killedAfterCharge
        self.unkindness = unkindness
        // A real device's URLSession waits 60 seconds for an answer (`timeoutIntervalForRequest`'s default); the
        // 15 seconds this waited could be outlasted by the sandbox on two cores shared with the whole parallel suite.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        session = URLSession(configuration: configuration)
    }

    /// The user moves the device's App Store account to another country's storefront: `Storefront.updates` says so.
    public func changeStorefront(countryCode: String, id: String) {
        let changed = Storefront(countryCode: countryCode, id: id)
        let followers = storefronts.withLock { state in
            state.current = changed
            return Array(state.followers.values)
        }
        for follower in followers { follower.yield(changed) }
    }

    /// Each storefront the device moves to from now on, for as long as it is iterated.
    func storefrontChanges() -> AsyncStream<Storefront> {
        let (stream, continuation) = AsyncStream<Storefront>.makeStream()
        let key = UUID()
        storefronts.withLock { $0.followers[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.storefronts.withLock { _ = $0.followers.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: The one device of this process

    private static let lock = NSLock()
    nonisolated(unsafe) private static var connected: StandInDevice?

    /// Makes `device` the store every stand-in call talks to (on iOS there is one StoreKit per process, too).
    public static func connect(_ device: StandInDevice) {
        lock.withLock { connected = device }
    }

    static func current() throws -> StandInDevice {
        guard let device = lock.withLock({ connected }) else {
            throw StoreKitError.systemError(StandInError.notConnected)
        }
        return device
    }

    // MARK: The device queue's API

    var canMakePayments: Bool { !unkindness.paymentsNotAllowed }

    func products(_ ids: [String]) async throws -> [Product] {
        var components = URLComponents(url: endpoint("products"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "ids", value: ids.joined(separator: ","))]
        let answer: ProductsAnswer = try await call("GET", components.url!, body: nil)
        return try answer.products.map { item in
            // A price the App Store did not write as a decimal is an error, never a free product.
            guard let price = Self.decimal(item.price) else {
                throw StoreKitError.systemError(StandInError.malformed)
            }
            return Product(
                id: item.id, type: Product.ProductType(rawValue: item.type), displayName: item.display_name,
                description: item.description, price: price, displayPrice: item.display_price,
                isFamilyShareable: item.family_shareable, subscription: try item.subscription.map(Self.subscription),
                currencyCode: item.currency)
        }
    }

    /// A subscription's terms as the device queue describes them; anything malformed is an error, never a free offer.
    private static func subscription(_ item: ProductsAnswer.Subscription) throws -> Product.SubscriptionInfo {
        func offer(_ item: ProductsAnswer.Offer, _ type: Product.SubscriptionOffer.OfferType) throws
            -> Product.SubscriptionOffer
        {
            guard let price = decimal(item.price), item.period_count > 0 else {
                throw StoreKitError.systemError(StandInError.malformed)
            }
            return Product.SubscriptionOffer(
                id: item.id, type: type, price: price, displayPrice: item.display_price,
                period: try period(item.period), periodCount: item.period_count,
                paymentMode: Product.SubscriptionOffer.PaymentMode(rawValue: item.payment_mode))
        }
        return Product.SubscriptionInfo(
            introductoryOffer: try item.introductory_offer.map { try offer($0, .introductory) },
            promotionalOffers: try item.promotional_offers.map { try offer($0, .promotional) },
            winBackOffers: try item.win_back_offers.map {
                try offer($0, Product.SubscriptionOffer.OfferType(rawValue: "win_back"))
            },
            subscriptionGroupID: item.group_id, subscriptionPeriod: try period(item.period))
    }

    /// `P<n><D|W|M|Y>`, as the App Store writes periods.
    private static func period(_ text: String) throws -> Product.SubscriptionPeriod {
        let units: [Character: Product.SubscriptionPeriod.Unit] = ["D": .day, "W": .week, "M": .month, "Y": .year]
        guard text.hasPrefix("P"), let unit = text.last.flatMap({ units[$0] }),
            let value = Int(text.dropFirst().dropLast()), value > 0
        else { throw StoreKitError.systemError(StandInError.malformed) }
        return Product.SubscriptionPeriod(unit: unit, value: value)
    }

    private static func decimal(_ text: String) -> Decimal? {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// What a purchase's options carry that the App Store checks: signed by the merchant's server.
    struct SignedOptions: Sendable {
        var promotionalOffer: SignedOffer?
        var introductoryOfferEligibility: String?
    }

    /// A promotional offer in one of StoreKit's two forms.
    enum SignedOffer: Hashable, Sendable {
        case compactJWS(offerID: String, String)
        case signature(offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int)

        /// As the device queue takes it.
        var body: [String: Any] {
            switch self {
            case .compactJWS(let offerID, let jws): ["offer_id": offerID, "compact_jws": jws]
            case .signature(let offerID, let keyID, let nonce, let signature, let timestamp):
                [
                    "offer_id": offerID, "key_id": keyID, "nonce": nonce.uuidString.lowercased(),
                    "signature": signature.base64EncodedString(), "timestamp": timestamp,
                ]
            }
        }
    }

    func purchase(
        productID: String, appAccountToken: UUID?, askToBuy: Bool, scene: String?, signed: SignedOptions = .init()
    ) async throws -> Product.PurchaseResult {
        var body: [String: Any] = [
            "product_id": productID, "ask_to_buy": askToBuy || asksToBuy, "confirm": confirmsPurchases,
        ]
        body["app_account_token"] = appAccountToken?.uuidString.lowercased()
        body["scene"] = scene
        body["promotional_offer"] = signed.promotionalOffer?.body
        body["introductory_offer_eligibility"] = signed.introductoryOfferEligibility
        let answer: PurchaseAnswer = try await call("POST", endpoint("purchase"), body: body)
        switch answer.result {
        case "success":
            guard let signed = answer.signed_transaction else { throw StoreKitError.unknown }
            if killedAfterCharge { kill(getpid(), SIGKILL) }
            // Charged, then interrupted (SKError 0 wrapping "Confirmation required", money taken: SwiftyStoreKit
            // issue 626): the app hears an error; the transaction waits in the queue.
            if unkindness.interruptsPurchases { throw StoreKitError.unknown }
            if unkindness.cancelsAfterCharge { return .userCancelled }
            return .success(try result(signed))
        case "pending": return .pending
        case "user_cancelled": return .userCancelled
        case "product_unavailable": throw Product.PurchaseError.productUnavailable
        case "invalid_offer_signature": throw Product.PurchaseError.invalidOfferSignature
        default: throw StoreKitError.unknown
        }
    }

    /// The purchases the user started on the App Store since the last call (each is answered once).
    @available(iOS 16.4, macOS 14.4, *)
    func purchaseIntents() async throws -> [PurchaseIntent] {
        let answer: IntentsAnswer = try await call("POST", endpoint("purchase-intents/take"), body: [:])
        guard !answer.intents.isEmpty else { return [] }
        let products = try await self.products(answer.intents.map(\.product_id))
        return answer.intents.compactMap { intent in
            products.first { $0.id == intent.product_id }.map { product in
                PurchaseIntent(
                    product: product,
                    offer: intent.offer.flatMap { offer in
                        // The offer as the product lists it (StoreKit hands over the product's own offer).
                        let listed =
                            (product.subscription?.promotionalOffers ?? [])
                            + (product.subscription?.winBack ?? [])
                        return listed.first { $0.id == offer.id && $0.type.rawValue == offer.type }
                    })
            }
        }
    }

    func unfinished() async throws -> [VerificationResult<Transaction>] {
        let answer: SignedList = try await call("GET", endpoint("unfinished"), body: nil)
        return try answer.signed_transactions.map(result)
    }

    func currentEntitlements() async throws -> [VerificationResult<Transaction>] {
        let answer: SignedList = try await call("GET", endpoint("entitlements"), body: nil)
        return try answer.signed_transactions.map(result)
    }

    /// Without a cursor (a launch), the unfinished transactions and the cursor of the newest update.
    func updates(after cursor: Int?) async throws -> (results: [VerificationResult<Transaction>], cursor: Int) {
        var components = URLComponents(url: endpoint("updates"), resolvingAgainstBaseURL: false)!
        if let cursor { components.queryItems = [URLQueryItem(name: "after", value: String(cursor))] }
        let answer: SignedList = try await call("GET", components.url!, body: nil)
        return (try answer.signed_transactions.map(result), answer.cursor ?? cursor ?? 0)
    }

    func finish(transactionID: UInt64) async throws {
        let _: Empty = try await call("POST", endpoint("finish"), body: ["transaction_id": String(transactionID)])
    }

    func sync() async throws {
        if let failure = unkindness.syncFailure { throw failure }
        let _: SignedList = try await call("GET", endpoint("unfinished"), body: nil)
    }

    private func endpoint(_ name: String) -> URL {
        server.appendingPathComponent("sandbox/appstore/devices").appendingPathComponent(deviceID)
            .appendingPathComponent(name)
    }

    private func call<Answer: Decodable>(_ method: String, _ url: URL, body: [String: Any]?) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let data: Data
        let response: URLResponse
        do {
            // Not a child task: cancelling one while URLSession delivers its answer deadlocks swift-corelibs-foundation.
            let session = session
            (data, response) = try await Task { try await session.data(for: request) }.value
        } catch let error as URLError {
            throw StoreKitError.networkError(error)
        }
        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
            throw StoreKitError.systemError(StandInError.refused(String(decoding: data.prefix(300), as: UTF8.self)))
        }
        return try JSONDecoder().decode(Answer.self, from: data)
    }

    /// The sandbox signs with its own authority; the device trusts it as StoreKit trusts Apple's, unless this
    /// device fails verification (``Unkindness/deviceVerificationFailure``), or fails it for this transaction
    /// (``Unkindness/transactionVerificationFailure``).
    /// `AppTransaction.shared`: the device queue's signed app transaction, checked as a transaction is.
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
    func appTransaction() async throws -> VerificationResult<AppTransaction> {
        struct Answer: Decodable { var signed_app_transaction: String }
        struct Payload: Decodable {
            var applicationVersion, bundleId, originalApplicationVersion: String
            var originalPurchaseDate: Date
        }
        let signed = try await (call("GET", endpoint("app-transaction"), body: nil) as Answer).signed_app_transaction
        let payload = try Self.claims(of: signed, as: Payload.self)
        let app = AppTransaction(
            appVersion: payload.applicationVersion, bundleID: payload.bundleId,
            originalAppVersion: payload.originalApplicationVersion, originalPurchaseDate: payload.originalPurchaseDate,
            signed: signed)
        // A device that cannot verify its transactions cannot verify this either: the same error.
        let failure: VerificationResult<AppTransaction>.VerificationError? =
            switch unkindness.deviceVerificationFailure {
            case nil: nil
            case .revokedCertificate: .revokedCertificate
            case .invalidCertificateChain: .invalidCertificateChain
            case .invalidDeviceVerification: .invalidDeviceVerification
            case .invalidEncoding: .invalidEncoding
            case .invalidSignature: .invalidSignature
            case .missingRequiredProperties: .missingRequiredProperties
            }
        return failure.map { .unverified(app, $0) } ?? .verified(app)
    }

    /// `Product.SubscriptionInfo.status(for:)` from the device queue; renewal info verified as its transaction is.
    func subscriptionStatuses(groupID: String) async throws -> [Product.SubscriptionInfo.Status] {
        struct Answer: Decodable {
            struct Item: Decodable {
                var status: Int
                var signed_transaction, signed_renewal_info: String
            }
            var statuses: [Item]
        }
        struct Renewal: Decodable {
            var originalTransactionId, productId: String
            var autoRenewStatus: Int
            var autoRenewProductId: String?
            var isInBillingRetryPeriod: Bool?
            var gracePeriodExpiresDate: Date?
        }
        var components = URLComponents(url: endpoint("subscription-status"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "group", value: groupID)]
        let answer: Answer = try await call("GET", components.url!, body: nil)
        return try answer.statuses.map { item in
            let transaction = try result(item.signed_transaction)
            let renewal = try Self.claims(of: item.signed_renewal_info, as: Renewal.self)
            guard let original = UInt64(renewal.originalTransactionId) else {
                throw StoreKitError.systemError(StandInError.malformed)
            }
            let info = Product.SubscriptionInfo.RenewalInfo(
                originalTransactionID: original, currentProductID: renewal.productId,
                willAutoRenew: renewal.autoRenewStatus == 1, autoRenewPreference: renewal.autoRenewProductId,
                isInBillingRetry: renewal.isInBillingRetryPeriod == true,
                gracePeriodExpirationDate: renewal.gracePeriodExpiresDate)
            let verified: VerificationResult<Product.SubscriptionInfo.RenewalInfo> =
                if case .unverified = transaction { .unverified(info, .invalidSignature) } else { .verified(info) }
            return Product.SubscriptionInfo.Status(
                state: .init(rawValue: item.status), transaction: transaction, renewalInfo: verified)
        }
    }

    /// The claims of a compact JWS the device queue handed over (dates in milliseconds, as Apple writes them);
    /// anything else is malformed.
    static func claims<Claims: Decodable>(of signed: String, as _: Claims.Type) throws -> Claims {
        let parts = signed.split(separator: ".", omittingEmptySubsequences: false)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? decoder.decode(Claims.self, from: payload)
        else { throw StoreKitError.systemError(StandInError.malformed) }
        return claims
    }

    func result(_ signed: String) throws -> VerificationResult<Transaction> {
        let transaction = Transaction(
            signed: signed, payload: try Self.claims(of: signed, as: StandInTransactionPayload.self))
        if let failure = unkindness.deviceVerificationFailure
            ?? unkindness.transactionVerificationFailure?(transaction.id)
        {
            return .unverified(transaction, failure)
        }
        return .verified(transaction)
    }

    private struct ProductsAnswer: Decodable {
        struct Item: Decodable {
            var id, type, display_name, description, price, display_price, currency: String
            var family_shareable: Bool
            var subscription: Subscription?
        }
        struct Subscription: Decodable {
            var group_id, period: String
            var introductory_offer: Offer?
            var promotional_offers, win_back_offers: [Offer]
        }
        struct Offer: Decodable {
            var id: String?
            var payment_mode, period, price, display_price: String
            var period_count: Int
        }
        var products: [Item]
    }

    private struct PurchaseAnswer: Decodable {
        var result: String
        var signed_transaction: String?
    }

    private struct IntentsAnswer: Decodable {
        struct Intent: Decodable {
            struct Offer: Decodable {
                var id: String
                var type: String
            }
            var product_id: String
            var offer: Offer?
        }
        var intents: [Intent]
    }

    private struct SignedList: Decodable {
        var signed_transactions: [String]
        var cursor: Int?
    }

    private struct Empty: Decodable {}
}

public enum StandInError: Error, CustomStringConvertible, Sendable {
    case notConnected
    case malformed
    case refused(String)

    public var description: String {
        switch self {
        case .notConnected: "no device connected: call StandInDevice.connect(_:) first"
        case .malformed: "the device queue answered a transaction that is not a compact JWS"
        case .refused(let text): "the device queue refused: \(text)"
        }
    }
}

/// What a signed transaction's payload says (Apple's `JWSTransactionDecodedPayload` names).
struct StandInTransactionPayload: Decodable {
    var transactionId: UInt64
    var originalTransactionId: UInt64
    var productId: String
    var bundleId: String
    var purchaseDate: Date
    var originalPurchaseDate: Date
    var expiresDate: Date?
    var quantity: Int
    var revocationDate: Date?
    var revocationReason: Int?
    var type: String
    var appAccountToken: UUID?
    var inAppOwnershipType: String?
    var offerType: Int?
    var offerIdentifier: String?
    var signedDate: Date

    enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, productId, bundleId, purchaseDate, originalPurchaseDate, expiresDate,
            quantity
        case revocationDate, revocationReason, type, appAccountToken, inAppOwnershipType, offerType, offerIdentifier,
            signedDate
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func id(_ key: CodingKeys) throws -> UInt64 {
            guard let value = UInt64(try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "not an unsigned integer")
            }
            return value
        }
        transactionId = try id(.transactionId)
        originalTransactionId = try id(.originalTransactionId)
        productId = try container.decode(String.self, forKey: .productId)
        bundleId = try container.decode(String.self, forKey: .bundleId)
        purchaseDate = try container.decode(Date.self, forKey: .purchaseDate)
        originalPurchaseDate = try container.decode(Date.self, forKey: .originalPurchaseDate)
        expiresDate = try container.decodeIfPresent(Date.self, forKey: .expiresDate)
        quantity = try container.decode(Int.self, forKey: .quantity)
        revocationDate = try container.decodeIfPresent(Date.self, forKey: .revocationDate)
        revocationReason = try container.decodeIfPresent(Int.self, forKey: .revocationReason)
        type = try container.decode(String.self, forKey: .type)
        appAccountToken = try container.decodeIfPresent(UUID.self, forKey: .appAccountToken)
        inAppOwnershipType = try container.decodeIfPresent(String.self, forKey: .inAppOwnershipType)
        offerType = try container.decodeIfPresent(Int.self, forKey: .offerType)
        offerIdentifier = try container.decodeIfPresent(String.self, forKey: .offerIdentifier)
        signedDate = try container.decode(Date.self, forKey: .signedDate)
    }
}

enum Base64URL {
    static func decode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
