import Foundation

/// Linux stand-in for StoreKit 2's `Product`: the same type and member names, backed by the connected
/// ``StandInDevice`` (the sandbox App Store's device queue). Only what OrderSafeKit's adapter uses is declared.
public struct Product: Identifiable, Hashable, Sendable {
    public struct ProductType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
    }

    /// StoreKit's options are opaque; the stand-in keeps the ones a device honours.
    public struct PurchaseOption: Hashable, Sendable {
        enum Value: Hashable, Sendable {
            case appAccountToken(UUID)
            case quantity(Int)
            case simulatesAskToBuyInSandbox(Bool)
            case promotionalOffer(StandInDevice.SignedOffer)
            case introductoryOfferEligibility(compactJWS: String)
        }
        let value: Value

        public static func appAccountToken(_ token: UUID) -> PurchaseOption {
            PurchaseOption(value: .appAccountToken(token))
        }
        public static func quantity(_ quantity: Int) -> PurchaseOption { PurchaseOption(value: .quantity(quantity)) }
        public static func simulatesAskToBuyInSandbox(_ simulate: Bool) -> PurchaseOption {
            PurchaseOption(value: .simulatesAskToBuyInSandbox(simulate))
        }
        #if compiler(>=6.2)
        /// A promotional offer the merchant's server signed as a compact JWS: in the iOS 26 SDK (Xcode 26, Swift 6.2)
        /// only, back-deployed to iOS 15 by StoreKit; Xcode 16's SDKs lack it (scripts/checks/platform-check builds
        /// the SDK against both).
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [PurchaseOption] {
            [PurchaseOption(value: .promotionalOffer(.compactJWS(offerID: offerID, compactJWS)))]
        }
        #endif
        /// A promotional offer signed the older way: the signature with its key id, nonce and timestamp (every SDK;
        /// deprecated in iOS 26, whose SDK has the compact-JWS form).
        @available(iOS, introduced: 15.0, deprecated: 26.0, message: "Sign promotional offers with JWS")
        @available(macOS, introduced: 12.0, deprecated: 26.0, message: "Sign promotional offers with JWS")
        @available(tvOS, introduced: 15.0, deprecated: 26.0, message: "Sign promotional offers with JWS")
        @available(watchOS, introduced: 8.0, deprecated: 26.0, message: "Sign promotional offers with JWS")
        @available(visionOS, introduced: 1.0, deprecated: 26.0, message: "Sign promotional offers with JWS")
        public static func promotionalOffer(
            offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int
        ) -> PurchaseOption {
            PurchaseOption(
                value: .promotionalOffer(
                    .signature(offerID: offerID, keyID: keyID, nonce: nonce, signature: signature, timestamp: timestamp)
                ))
        }
        /// The merchant server's signed word on the customer's introductory-offer eligibility.
        public static func introductoryOfferEligibility(compactJWS: String) -> PurchaseOption {
            PurchaseOption(value: .introductoryOfferEligibility(compactJWS: compactJWS))
        }
    }

    public enum PurchaseResult: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    public enum PurchaseError: Error, Hashable, Sendable {
        case invalidQuantity, productUnavailable, purchaseNotAllowed, ineligibleForOffer, invalidOfferIdentifier,
            invalidOfferPrice,
            invalidOfferSignature, missingOfferParameters
    }

    public let id: String
    public let type: ProductType
    public let displayName: String
    public let description: String
    public let price: Decimal
    public let displayPrice: String
    public let isFamilyShareable: Bool
    public let subscription: SubscriptionInfo?
    /// How the storefront formats prices; its `currencyCode` is the storefront's currency.
    public let priceFormatStyle: Decimal.FormatStyle.Currency

    public init(
        id: String, type: ProductType, displayName: String, description: String, price: Decimal, displayPrice: String,
        isFamilyShareable: Bool, subscription: SubscriptionInfo? = nil, currencyCode: String = "CNY"
    ) {
        self.id = id
        self.type = type
        self.displayName = displayName
        self.description = description
        self.price = price
        self.displayPrice = displayPrice
        self.isFamilyShareable = isFamilyShareable
        self.subscription = subscription
        self.priceFormatStyle = Decimal.FormatStyle.Currency(code: currencyCode)
    }

    /// The products the store knows among `identifiers` (unknown ones are left out, as StoreKit does).
    public static func products<Identifiers: Collection>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers.Element == String {
        try await StandInDevice.current().products(Array(identifiers))
    }

    @available(visionOS, unavailable)  // StoreKit's: visionOS buys through purchase(confirmIn:) only
    @MainActor
    public func purchase(options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        try await purchase(options, scene: nil)
    }

    /// The purchase sheet over `scene` (iOS 17+): the device records the scene's title with the purchase.
    @available(iOS 17.0, tvOS 17.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor
    public func purchase(confirmIn scene: some UIScene, options: Set<PurchaseOption> = []) async throws
        -> PurchaseResult
    {
        try await purchase(options, scene: scene.title)
    }

    private func purchase(_ options: Set<PurchaseOption>, scene: String?) async throws -> PurchaseResult {
        var token: UUID?
        var askToBuy = false
        var signed = StandInDevice.SignedOptions()
        for option in options {
            switch option.value {
            case .appAccountToken(let value): token = value
            case .simulatesAskToBuyInSandbox(let value): askToBuy = value
            case .quantity(let quantity): if quantity != 1 { throw PurchaseError.invalidQuantity }
            case .promotionalOffer(let offer): signed.promotionalOffer = offer
            case .introductoryOfferEligibility(let jws): signed.introductoryOfferEligibility = jws
            }
        }
        return try await StandInDevice.current().purchase(
            productID: id, appAccountToken: token, askToBuy: askToBuy, scene: scene, signed: signed)
    }
}
