import Foundation

/// The seam between OrderSafeKit and the App Store, shaped like StoreKit 2. ``StoreKitClient`` is the real one;
/// tests drive the purchase machine through their own.
public protocol StoreClient: Sendable {
    /// `AppStore.canMakePayments`: false when parental controls forbid paying.
    var canMakePayments: Bool { get async }
    /// `Product.products(for:)`: the ids the store knows, with their store details.
    func products(for ids: [String]) async throws -> [StoreProduct]
    /// `Product.purchase(confirmIn: scene, options: [.appAccountToken(token)] + signed)` where the system has it and
    /// a scene is given, else `Product.purchase(options:)`.
    func purchase(
        productID: String, appAccountToken: UUID, signed: SignedPurchaseOptions, confirmIn scene: ConfirmationScene?
    ) async throws -> StorePurchaseResult
    /// `AppStore.showManageSubscriptions(in:)` (iOS, visionOS), opened on `subscriptionGroupID` where the system
    /// can (iOS 17); throws ``StoreFailure/StoreKitErrorKind/unsupported`` elsewhere.
    func showManageSubscriptions(in scene: ConfirmationScene, subscriptionGroupID: String?) async throws
    /// `Transaction.beginRefundRequest(for:in:)` (iOS, visionOS): true when the user sent the request to Apple,
    /// false when they closed the sheet; throws ``StoreFailure/StoreKitErrorKind/unsupported`` elsewhere.
    func beginRefundRequest(transactionID: UInt64, in scene: ConfirmationScene) async throws -> Bool
    /// `AppStore.presentOfferCodeRedeemSheet(in:)` (iOS 16, visionOS): a code redeemed there arrives through
    /// `updates`; throws ``StoreFailure/StoreKitErrorKind/unsupported`` elsewhere.
    func presentOfferCodeRedeemSheet(in scene: ConfirmationScene) async throws
    /// `PurchaseIntent.intents` (iOS 16.4+, macOS 14.4+): each purchase the user starts on the App Store (a promoted
    /// in-app purchase, or an offer tapped there: `PurchaseIntent.offer`, iOS 18), for as long as it is iterated;
    /// where there is none, it ends.
    func purchaseIntents() -> AsyncStream<StorePurchaseIntent>
    /// `Transaction.unfinished`: every transaction not finished yet.
    func unfinished() async -> [StoreTransaction]
    /// `Transaction.currentEntitlements`: the verified transactions that entitle the user now (non-consumables,
    /// active subscriptions), what a restore sends to the server.
    func currentEntitlements() async -> [StoreTransaction]
    /// `Transaction.updates`: transactions created or changed outside a purchase call, for as long as it is iterated.
    func updates() -> AsyncStream<StoreTransaction>
    /// `Transaction.finish()` of this transaction, as the store handed it over; false when the store holds no
    /// unfinished transaction of that id (finished already), and nothing was finished.
    func finish(_ transaction: StoreTransaction) async -> Bool
    /// `AppStore.sync()`.
    func sync() async throws
    /// `Product.SubscriptionInfo.status(for: groupID)`: each subscription of the group this device's Apple ID has.
    func subscriptionStatuses(groupID: String) async throws -> [StoreSubscriptionStatus]
    /// `AppTransaction.shared`'s `jwsRepresentation` (iOS 16, macOS 13): the app's own purchase by the device's
    /// Apple ID, for the server to verify; nil where StoreKit has none.
    func appTransaction() async throws -> String?
    /// `Storefront.current`: nil when the App Store cannot say (signed out of the App Store, offline).
    func storefront() async -> StoreStorefront?
    /// `Storefront.updates`: each storefront the account moves to, for as long as it is iterated.
    func storefrontUpdates() -> AsyncStream<StoreStorefront>
}

/// What the merchant's server signed for one purchase, passed to StoreKit with it.
public struct SignedPurchaseOptions: Sendable, Hashable {
    /// A promotional or win-back offer as the server signed it, in both forms StoreKit takes.
    public var promotionalOffer: PromotionalOffer?
    /// The server's word on the user's introductory-offer eligibility
    /// (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`).
    public var introductoryOfferEligibility: String?

    /// An offer signed for one purchase: the compact JWS (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`,
    /// in the iOS 26 SDK, back-deployed to iOS 15) and the same offer's signature with its key id, nonce and timestamp
    /// (`promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`, the only form in the SDKs before it).
    public struct PromotionalOffer: Sendable, Hashable {
        public var offerID: String
        public var compactJWS: String
        public var keyID: String
        public var nonce: UUID
        /// DER ECDSA signature.
        public var signature: Data
        /// Milliseconds since 1970.
        public var timestamp: Int

        public init(offerID: String, compactJWS: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int) {
            self.offerID = offerID
            self.compactJWS = compactJWS
            self.keyID = keyID
            self.nonce = nonce
            self.signature = signature
            self.timestamp = timestamp
        }
    }

    public init(promotionalOffer: PromotionalOffer? = nil, introductoryOfferEligibility: String? = nil) {
        self.promotionalOffer = promotionalOffer
        self.introductoryOfferEligibility = introductoryOfferEligibility
    }
}

/// A product as the store describes it.
public struct StoreProduct: Sendable, Hashable {
    public var id: String
    public var displayName: String
    public var description: String
    /// The store's price in the storefront's currency (display only: what OrderSafe charges is the catalog's).
    public var price: Decimal
    public var displayPrice: String
    /// The storefront's currency (ISO 4217), as StoreKit's `priceFormatStyle` has it.
    public var currencyCode: String
    /// Whether Family Sharing shares it with the buyer's family.
    public var isFamilyShareable: Bool
    /// An auto-renewable subscription's group, period and offers.
    public var subscription: StoreSubscription?

    public init(
        id: String, displayName: String, description: String, price: Decimal, displayPrice: String,
        currencyCode: String = "", isFamilyShareable: Bool = false, subscription: StoreSubscription? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.description = description
        self.price = price
        self.displayPrice = displayPrice
        self.currencyCode = currencyCode
        self.isFamilyShareable = isFamilyShareable
        self.subscription = subscription
    }
}

/// The App Store storefront the device buys in (`Storefront`).
public struct StoreStorefront: Sendable, Hashable {
    /// ISO 3166-1 alpha-3 (`CHN`).
    public var countryCode: String
    /// Apple's storefront id (`143465` for China mainland).
    public var id: String

    public init(countryCode: String, id: String) {
        self.countryCode = countryCode
        self.id = id
    }
}

/// A transaction as the store delivered it: its signed form as received, and whether StoreKit verified it.
public struct StoreTransaction: Sendable, Hashable {
    public var id: UInt64
    public var originalID: UInt64
    public var productID: String
    /// The order's UUID, when the purchase carried one.
    public var appAccountToken: UUID?
    public var revocationDate: Date?
    /// When the App Store charged (for an Ask to Buy, when the parent approved).
    public var purchaseDate: Date?
    /// When a subscription's period ends.
    public var expirationDate: Date?
    /// `VerificationResult.jwsRepresentation`, unchanged.
    public var jwsRepresentation: String
    /// Why StoreKit could not verify it, or nil when verified.
    public var verificationFailure: String?

    public init(
        id: UInt64, originalID: UInt64, productID: String, appAccountToken: UUID?, revocationDate: Date? = nil,
        purchaseDate: Date? = nil, expirationDate: Date? = nil, jwsRepresentation: String,
        verificationFailure: String? = nil
    ) {
        self.purchaseDate = purchaseDate
        self.expirationDate = expirationDate
        self.id = id
        self.originalID = originalID
        self.productID = productID
        self.appAccountToken = appAccountToken
        self.revocationDate = revocationDate
        self.jwsRepresentation = jwsRepresentation
        self.verificationFailure = verificationFailure
    }

    public var isVerified: Bool { verificationFailure == nil }
}

/// `Product.PurchaseResult`.
public enum StorePurchaseResult: Sendable, Hashable {
    case success(StoreTransaction)
    case userCancelled
    /// Ask to Buy, or a payment needing more steps: the transaction comes later through `updates`.
    case pending
}

/// Why a store call failed, in StoreKit's terms (`StoreKitError`, `Product.PurchaseError`, `SKError.Code`).
public enum StoreFailure: Error, Sendable, Hashable {
    case storeKit(StoreKitErrorKind)
    case purchase(PurchaseErrorKind)
    /// The product could not be looked up before any sheet was shown (offline, the App Store unreachable): nothing
    /// was charged.
    case lookup(StoreKitErrorKind)
    /// StoreKit 1's `SKError.Code` raw value (0…21), for apps still on `SKPaymentQueue`.
    case skError(Int)
    case other(String)

    public enum StoreKitErrorKind: String, Sendable, Hashable, CaseIterable {
        case unknown, userCancelled, networkError, systemError, notAvailableInStorefront, notEntitled, unsupported
    }

    public enum PurchaseErrorKind: String, Sendable, Hashable, CaseIterable {
        case invalidQuantity, productUnavailable, purchaseNotAllowed, ineligibleForOffer, invalidOfferIdentifier,
            invalidOfferPrice
        case invalidOfferSignature, missingOfferParameters
    }

    /// Whether the store may have charged before it failed: an unknown, network or system error, or an unknown
    /// StoreKit 1 error (SKError 0 wraps "Confirmation required" after the money was taken: SwiftyStoreKit issue 626;
    /// RevenueCat purchases-unity issue 90 saw store errors after charging on ~15% of devices). Its transaction may
    /// still come through `Transaction.updates`. The other failures are refusals before any charge.
    public var mayHaveCharged: Bool {
        switch self {
        case .storeKit(let kind): [.unknown, .networkError, .systemError].contains(kind)
        case .skError(let code): code == 0
        case .other: true
        case .purchase, .lookup: false
        }
    }
}

/// A purchase the user started on the App Store (`PurchaseIntent`).
public struct StorePurchaseIntent: Sendable, Hashable {
    /// The App Store product id.
    public var productID: String
    /// The promotional or win-back offer tapped with it (`PurchaseIntent.offer`, iOS 18): its id in App Store Connect.
    public var offerID: String?

    public init(productID: String, offerID: String? = nil) {
        self.productID = productID
        self.offerID = offerID
    }
}
