import Foundation

/// Linux stand-in for StoreKit 2's `Transaction`, read from the JWS the sandbox App Store signed.
public struct Transaction: Identifiable, Hashable, Sendable {
    /// Why the App Store revoked it (a struct, as StoreKit's: raw values as the App Store Server API's).
    public struct RevocationReason: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let developerIssue = RevocationReason(rawValue: 1)
        public static let other = RevocationReason(rawValue: 0)
    }

    /// Who owns it: the buyer, or a member of the buyer's family.
    public struct OwnershipType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchased = OwnershipType(rawValue: "PURCHASED")
        public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
    }

    /// The offer it was bought with (Apple's offerType: 1 introductory, 2 promotional, 3 offer code, 4 win-back).
    public struct OfferType: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let introductory = OfferType(rawValue: 1)
        public static let promotional = OfferType(rawValue: 2)
        public static let code = OfferType(rawValue: 3)
        public static var winBack: OfferType { OfferType(rawValue: 4) }
    }

    public let id: UInt64
    public let originalID: UInt64
    public let productID: String
    public let appBundleID: String
    public let purchaseDate: Date
    public let originalPurchaseDate: Date
    public let expirationDate: Date?
    public let purchasedQuantity: Int
    public let revocationDate: Date?
    public let revocationReason: RevocationReason?
    public let productType: Product.ProductType
    public let appAccountToken: UUID?
    public let ownershipType: OwnershipType
    /// iOS 15's names (`offer` replaced them in 17.2; OrderSafeKit targets 15).
    public let offerType: OfferType?
    public let offerID: String?
    public let signedDate: Date
    /// The JWS this transaction was read from (StoreKit keeps it behind `VerificationResult.jwsRepresentation`).
    let signed: String

    /// Tells the store the app delivered the purchase; the transaction leaves `unfinished` for good.
    public func finish() async {
        try? await StandInDevice.current().finish(transactionID: id)
    }

    /// Every transaction the store has not been told is finished.
    public static var unfinished: Transactions { Transactions(source: .unfinished) }

    /// The transactions that entitle the user now: non-consumables and subscriptions not refunded.
    public static var currentEntitlements: Transactions { Transactions(source: .currentEntitlements) }

    /// Unfinished transactions once at launch, then transactions created or changed outside a `purchase` call
    /// (Ask to Buy approvals, renewals, refunds), as StoreKit delivers them.
    public static var updates: Transactions { Transactions(source: .updates) }

    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>
        enum Source: Sendable { case unfinished, currentEntitlements, updates }
        let source: Source

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let source: Source
            var buffer: [VerificationResult<Transaction>] = []
            var cursor: Int?
            var drained = false

            init(source: Source) { self.source = source }

            public mutating func next() async -> VerificationResult<Transaction>? {
                while buffer.isEmpty {
                    if Task.isCancelled { return nil }
                    switch source {
                    case .unfinished, .currentEntitlements:
                        if drained { return nil }
                        drained = true
                        let device = try? StandInDevice.current()
                        if source == .unfinished {
                            buffer = (try? await device?.unfinished()) ?? []
                        } else {
                            buffer = (try? await device?.currentEntitlements()) ?? []
                        }
                        if buffer.isEmpty { return nil }
                    case .updates:
                        if let page = try? await StandInDevice.current().updates(after: cursor) {
                            buffer = page.results
                            cursor = page.cursor
                        }
                        if buffer.isEmpty { try? await Task.sleep(for: StandInDevice.updatePollInterval) }
                    }
                }
                return buffer.removeFirst()
            }
        }
    }

    init(signed: String, payload: StandInTransactionPayload) {
        self.signed = signed
        id = payload.transactionId
        originalID = payload.originalTransactionId
        productID = payload.productId
        appBundleID = payload.bundleId
        purchaseDate = payload.purchaseDate
        originalPurchaseDate = payload.originalPurchaseDate
        expirationDate = payload.expiresDate
        purchasedQuantity = payload.quantity
        revocationDate = payload.revocationDate
        revocationReason = payload.revocationReason.map(RevocationReason.init(rawValue:))
        productType = Product.ProductType(rawValue: payload.type)
        appAccountToken = payload.appAccountToken
        ownershipType = OwnershipType(rawValue: payload.inAppOwnershipType ?? OwnershipType.purchased.rawValue)
        offerType = payload.offerType.map(OfferType.init(rawValue:))
        offerID = payload.offerIdentifier
        signedDate = payload.signedDate
    }
}
