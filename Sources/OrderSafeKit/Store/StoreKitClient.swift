import Foundation

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
#if os(iOS) || os(visionOS)
import UIKit
#endif

/// The real ``StoreClient``: StoreKit 2 on Apple platforms. On Linux the same source compiles against
/// StoreKitStandIn, whose types carry StoreKit's names, so what ships to iOS is built and run here.
public struct StoreKitClient: StoreClient {
    /// The verified transactions handed over lately, by id: ``finish(_:)`` finishes the very one the server recorded.
    private let handed = HandedTransactions()

    public init() {}

    public var canMakePayments: Bool {
        get async { AppStore.canMakePayments }
    }

    public func products(for ids: [String]) async throws -> [StoreProduct] {
        do {
            return try await Product.products(for: ids).map(Self.product)
        } catch {
            throw Self.failure(error)
        }
    }

    public func purchase(
        productID: String, appAccountToken: UUID, signed: SignedPurchaseOptions, confirmIn scene: ConfirmationScene?
    ) async throws -> StorePurchaseResult {
        let products: [Product]
        do {
            products = try await Product.products(for: [productID])
        } catch {
            // Before any sheet: whatever StoreKit says, nothing was charged.
            switch Self.failure(error) {
            case .storeKit(let kind): throw StoreFailure.lookup(kind)
            default: throw StoreFailure.lookup(.unknown)
            }
        }
        guard let product = products.first else { throw StoreFailure.purchase(.productUnavailable) }
        do {
            var options: Set<Product.PurchaseOption> = [.appAccountToken(appAccountToken)]
            if let offer = signed.promotionalOffer {
                #if compiler(>=6.2)
                // The iOS 26 SDK (Xcode 26, Swift 6.2): the compact JWS, back-deployed to iOS 15.
                options.formUnion(Product.PurchaseOption.promotionalOffer(offer.offerID, compactJWS: offer.compactJWS))
                #else
                // Xcode 16's SDKs have no JWS form: the same offer's signature, key id, nonce and timestamp.
                options.insert(
                    .promotionalOffer(
                        offerID: offer.offerID, keyID: offer.keyID, nonce: offer.nonce, signature: offer.signature,
                        timestamp: offer.timestamp))
                #endif
            }
            if let eligibility = signed.introductoryOfferEligibility {
                options.insert(.introductoryOfferEligibility(compactJWS: eligibility))
            }
            switch try await Self.purchase(product, options, confirmIn: scene) {
            case .success(let result): return .success(handed.keep(result))
            case .userCancelled: return .userCancelled
            case .pending: return .pending
            @unknown default: return .pending
            }
        } catch {
            throw Self.failure(error)
        }
    }

    /// Over the app's scene where StoreKit takes one; visionOS has no other way (`purchase(options:)` is unavailable
    /// there), so without a scene it takes the foreground one, as RevenueCat's `currentWindowScene` does.
    static func purchase(
        _ product: Product, _ options: Set<Product.PurchaseOption>, confirmIn scene: ConfirmationScene?
    )
        async throws -> Product.PurchaseResult
    {
        #if os(visionOS)
        // Not `scene ?? (await …)`: an `await` inside `??`'s autoclosure does not compile.
        var scene = scene
        if scene == nil { scene = await foregroundScene() }
        #endif
        #if os(iOS) || os(tvOS) || os(visionOS) || os(Linux)
        if #available(iOS 17.0, tvOS 17.0, visionOS 1.0, *), let scene {
            return try await product.purchase(confirmIn: scene, options: options)
        }
        #endif
        #if os(visionOS)
        throw StoreFailure.storeKit(.unsupported)  // no scene in the foreground to show the sheet over
        #else
        return try await product.purchase(options: options)
        #endif
    }

    #if os(visionOS)
    @MainActor static func foregroundScene() -> ConfirmationScene? {
        UIApplication.shared.connectedScenes.first { $0.activationState == .foregroundActive }
    }
    #endif

    public func purchaseIntents() -> AsyncStream<StorePurchaseIntent> {
        AsyncStream { continuation in
            #if os(iOS) || os(macOS) || os(Linux)
            if #available(iOS 16.4, macOS 14.4, *) {
                let task = Task {
                    for await intent in PurchaseIntent.intents {
                        continuation.yield(
                            StorePurchaseIntent(productID: intent.product.id, offerID: Self.offer(intent)))
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
                return
            }
            #endif
            continuation.finish()  // tvOS, watchOS, visionOS, and systems before PurchaseIntent
        }
    }

    #if os(iOS) || os(macOS) || os(Linux)
    /// The promotional or win-back offer the user tapped with the product (iOS 18, macOS 15); an introductory offer
    /// needs nothing of the app (StoreKit applies it), so it is none here.
    @available(iOS 16.4, macOS 14.4, *)
    static func offer(_ intent: PurchaseIntent) -> String? {
        guard #available(iOS 18.0, macOS 15.0, *), let offer = intent.offer, offer.type != .introductory else {
            return nil
        }
        return offer.id
    }
    #endif

    public func unfinished() async -> [StoreTransaction] {
        var found: [StoreTransaction] = []
        for await result in Transaction.unfinished {
            found.append(handed.keep(result))
        }
        return found
    }

    public func currentEntitlements() async -> [StoreTransaction] {
        var found: [StoreTransaction] = []
        for await result in Transaction.currentEntitlements {
            found.append(handed.keep(result))
        }
        return found
    }

    public func updates() -> AsyncStream<StoreTransaction> {
        AsyncStream { continuation in
            let task = Task { [handed] in
                for await result in Transaction.updates {
                    continuation.yield(handed.keep(result))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func finish(_ transaction: StoreTransaction) async -> Bool {
        // Only a transaction still unfinished is finished; the one handed over is the one finished.
        for await result in Transaction.unfinished where result.unsafePayloadValue.id == transaction.id {
            await (handed.take(transaction.id) ?? result.unsafePayloadValue).finish()
            return true
        }
        _ = handed.take(transaction.id)
        return false
    }

    public func showManageSubscriptions(in scene: ConfirmationScene, subscriptionGroupID: String?) async throws {
        #if os(iOS) || os(visionOS) || os(Linux)
        guard let window = await Self.windowScene(scene) else { throw StoreFailure.storeKit(.unsupported) }
        do {
            if #available(iOS 17.0, visionOS 1.0, *), let subscriptionGroupID {
                try await AppStore.showManageSubscriptions(in: window, subscriptionGroupID: subscriptionGroupID)
            } else {
                try await AppStore.showManageSubscriptions(in: window)
            }
        } catch {
            throw Self.failure(error)
        }
        #else
        throw StoreFailure.storeKit(.unsupported)
        #endif
    }

    public func beginRefundRequest(transactionID: UInt64, in scene: ConfirmationScene) async throws -> Bool {
        #if os(iOS) || os(visionOS) || os(Linux)
        guard let window = await Self.windowScene(scene) else { throw StoreFailure.storeKit(.unsupported) }
        // Its status enum is tvOS 17 and watchOS 10: the availability check names them though this code is iOS's and
        // visionOS's.
        if #available(iOS 15.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *) {
            do {
                return try await Transaction.beginRefundRequest(for: transactionID, in: window) == .success
            } catch {
                throw Self.failure(error)
            }
        }
        throw StoreFailure.storeKit(.unsupported)
        #else
        throw StoreFailure.storeKit(.unsupported)
        #endif
    }

    public func presentOfferCodeRedeemSheet(in scene: ConfirmationScene) async throws {
        #if os(iOS) || os(visionOS) || os(Linux)
        guard let window = await Self.windowScene(scene) else { throw StoreFailure.storeKit(.unsupported) }
        guard #available(iOS 16.0, visionOS 1.0, *) else { throw StoreFailure.storeKit(.unsupported) }
        do {
            try await AppStore.presentOfferCodeRedeemSheet(in: window)
        } catch {
            throw Self.failure(error)
        }
        #else
        throw StoreFailure.storeKit(.unsupported)
        #endif
    }

    #if os(iOS) || os(visionOS) || os(Linux)
    /// The window scene StoreKit's sheets need (a purchase takes any scene; these take a window's).
    @MainActor static func windowScene(_ scene: ConfirmationScene) -> UIWindowScene? {
        scene as? UIWindowScene
    }
    #endif

    public func sync() async throws {
        do {
            try await AppStore.sync()
        } catch {
            throw Self.failure(error)
        }
    }

    static func transaction(_ result: VerificationResult<Transaction>) -> StoreTransaction {
        let transaction = result.unsafePayloadValue
        var failure: String?
        if case .unverified(_, let error) = result { failure = "\(error)" }
        return StoreTransaction(
            id: transaction.id, originalID: transaction.originalID, productID: transaction.productID,
            appAccountToken: transaction.appAccountToken, revocationDate: transaction.revocationDate,
            purchaseDate: transaction.purchaseDate, expirationDate: transaction.expirationDate,
            jwsRepresentation: result.jwsRepresentation,
            verificationFailure: failure)
    }

    static func failure(_ error: any Error) -> StoreFailure {
        if let error = error as? StoreKitError {
            switch error {
            case .userCancelled: return .storeKit(.userCancelled)
            case .networkError: return .storeKit(.networkError)
            case .systemError: return .storeKit(.systemError)
            case .notAvailableInStorefront: return .storeKit(.notAvailableInStorefront)
            case .notEntitled: return .storeKit(.notEntitled)
            case .unsupported: return .storeKit(.unsupported)
            case .unknown: return .storeKit(.unknown)
            @unknown default: return .storeKit(.unknown)
            }
        }
        if let error = error as? Product.PurchaseError {
            switch error {
            case .invalidQuantity: return .purchase(.invalidQuantity)
            case .productUnavailable: return .purchase(.productUnavailable)
            case .purchaseNotAllowed: return .purchase(.purchaseNotAllowed)
            case .ineligibleForOffer: return .purchase(.ineligibleForOffer)
            case .invalidOfferIdentifier: return .purchase(.invalidOfferIdentifier)
            case .invalidOfferPrice: return .purchase(.invalidOfferPrice)
            case .invalidOfferSignature: return .purchase(.invalidOfferSignature)
            case .missingOfferParameters: return .purchase(.missingOfferParameters)
            @unknown default: return .other("\(error)")
            }
        }
        return .other(String(describing: type(of: error)))
    }
}

/// The verified StoreKit transactions the adapter handed over, by id, until finished (at most ``limit``: the oldest go
/// first; a transaction no longer kept is found again in `Transaction.unfinished`).
final class HandedTransactions: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var byID: [UInt64: Transaction] = [:]
    nonisolated(unsafe) private var order: [UInt64] = []
    static let limit = 256

    /// `result` as the coordinator sees it; its transaction kept when StoreKit verified it.
    func keep(_ result: VerificationResult<Transaction>) -> StoreTransaction {
        let transaction = StoreKitClient.transaction(result)
        if case .verified(let verified) = result {
            lock.withLock {
                if byID.updateValue(verified, forKey: verified.id) == nil { order.append(verified.id) }
                while order.count > Self.limit { byID[order.removeFirst()] = nil }
            }
        }
        return transaction
    }

    /// The kept transaction of `id`, no longer kept.
    func take(_ id: UInt64) -> Transaction? {
        lock.withLock {
            order.removeAll { $0 == id }
            return byID.removeValue(forKey: id)
        }
    }
}
