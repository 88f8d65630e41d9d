import Foundation

@testable import OrderSafeKit

/// A device's StoreKit: transactions stay unfinished until finished; the queue outlives an app "kill" (the same
/// FakeStore is handed to the relaunched OrderSafe).
actor FakeStore: StoreClient {
    /// What the purchase sheet does: `failAfterCharge` is the interrupted purchase ("Confirmation required"): the
    /// money is taken, the call throws, and the transaction arrives later through `Transaction.updates`.
    enum Sheet: Sendable {
        case confirm, cancel, askToBuy
        case fail(StoreFailure)
        case failAfterCharge(StoreFailure)
        /// Charges, then answers `userCancelled`, as StoreKit on iOS 18 has (RevenueCat purchases-ios #4903).
        case cancelAfterCharge
    }

    var sheet: Sheet = .confirm
    var canPay = true
    var verifies = true
    private(set) var charged: [StoreTransaction] = []
    private(set) var unfinishedIDs: [UInt64] = []
    private(set) var finishCount: [UInt64: Int] = [:]
    private var askToBuy: [(productID: String, token: UUID)] = []
    private var nextID: UInt64 = 1000
    let crash: CrashPoints
    /// The scene each purchase sheet was shown over (nil: none given), in order.
    private(set) var scenes: [ConfirmationScene?] = []
    /// What the server signed for each purchase, in order.
    private(set) var signedOptions: [SignedPurchaseOptions] = []
    /// The sheets shown: `manage_subscriptions[:group]`, `refund_request:<transaction id>`.
    private(set) var sheets: [String] = []
    /// The listener of the app now running (a relaunch opens a new one, as each process has its own).
    nonisolated let listener = Listener<StoreTransaction>()
    /// The App Store's promoted purchases, delivered to the app now running (`PurchaseIntent.intents`).
    nonisolated let intents = Listener<StorePurchaseIntent>()

    final class Listener<Element: Sendable>: Sendable {
        private let lock = NSLock()
        nonisolated(unsafe) private var continuation: AsyncStream<Element>.Continuation?

        func replace(_ new: AsyncStream<Element>.Continuation) {
            lock.withLock {
                continuation?.finish()
                continuation = new
            }
        }

        func yield(_ element: Element) {
            _ = lock.withLock { continuation }?.yield(element)
        }
    }

    init(crash: CrashPoints = CrashPoints()) {
        self.crash = crash
    }

    /// Whether the sheet waits, shown, until ``release()`` (a buyer who has not tapped yet).
    private var holds = false
    private var shown: [CheckedContinuation<Void, Never>] = []

    func set(holds: Bool) { self.holds = holds }
    /// How many sheets wait for the buyer.
    var sheetsShown: Int { shown.count }
    /// The buyer answers every sheet shown.
    func release() {
        shown.forEach { $0.resume() }
        shown = []
    }

    func set(sheet: Sheet) { self.sheet = sheet }
    func set(canPay: Bool) { self.canPay = canPay }
    func set(verifies: Bool) { self.verifies = verifies }

    var canMakePayments: Bool { canPay }

    /// Products as a test describes them (a subscription's terms); any other id is a ¥6 product.
    private var described: [String: StoreProduct] = [:]
    func describe(_ product: StoreProduct) { described[product.id] = product }

    /// `Storefront.current`.
    private var front: StoreStorefront? = StoreStorefront(countryCode: "CHN", id: "143465")
    func set(storefront: StoreStorefront?) {
        front = storefront
        if let storefront { storefronts.yield(storefront) }
    }
    /// Who follows `Storefront.updates`.
    nonisolated let storefronts = Listener<StoreStorefront>()
    nonisolated func storefrontUpdates() -> AsyncStream<StoreStorefront> {
        let (stream, continuation) = AsyncStream<StoreStorefront>.makeStream()
        storefronts.replace(continuation)
        return stream
    }
    func storefront() async -> StoreStorefront? { front }

    /// `Product.SubscriptionInfo.status(for:)`: each entitled subscription bought here, subscribed, renewing.
    func subscriptionStatuses(groupID: String) async throws -> [StoreSubscriptionStatus] {
        charged.filter { entitledProducts.contains($0.productID) && $0.productID == "vip.ios" }.map {
            StoreSubscriptionStatus(
                state: .subscribed, productID: $0.productID, originalTransactionID: $0.originalID,
                expirationDate: $0.expirationDate, willAutoRenew: true, autoRenewProductID: $0.productID,
                isVerified: $0.isVerified)
        }
    }

    /// `AppTransaction.shared`'s JWS (nil: a system without one).
    private var app: String? = "app.jws"
    func set(appTransaction: String?) { app = appTransaction }
    func appTransaction() async throws -> String? { app }

    func presentOfferCodeRedeemSheet(in scene: ConfirmationScene) async throws {
        sheets.append("offer_code_redemption")
    }

    func products(for ids: [String]) async throws -> [StoreProduct] {
        ids.filter { $0 != "unknown.ios" }.map {
            described[$0]
                ?? StoreProduct(id: $0, displayName: "Store \($0)", description: "", price: 6, displayPrice: "¥6.00")
        }
    }

    func purchase(
        productID: String, appAccountToken: UUID, signed: SignedPurchaseOptions, confirmIn scene: ConfirmationScene?
    ) async throws -> StorePurchaseResult {
        scenes.append(scene)
        signedOptions.append(signed)
        if holds { await withCheckedContinuation { shown.append($0) } }
        await crash.step("store: sheet")
        switch sheet {
        case .cancel: return .userCancelled
        case .cancelAfterCharge:
            _ = charge(productID: productID, token: appAccountToken)
            return .userCancelled
        case .fail(let failure): throw failure
        case .failAfterCharge(let failure):
            _ = charge(productID: productID, token: appAccountToken)
            throw failure
        case .askToBuy:
            askToBuy.append((productID, appAccountToken))
            await crash.step("store: asked a parent")
            return .pending
        case .confirm:
            let transaction = charge(productID: productID, token: appAccountToken)
            await crash.step("store: charged")
            return .success(transaction)
        }
    }

    /// A purchase made outside this app's purchase call (another device of the Apple ID, an offer code): charged and
    /// unfinished, not delivered anywhere yet.
    func chargeElsewhere(productID: String, token: UUID) -> StoreTransaction {
        charge(productID: productID, token: token)
    }

    /// A parent approves the waiting Ask to Buy requests: charged, delivered through updates.
    func approveAll() {
        for request in askToBuy {
            let transaction = charge(productID: request.productID, token: request.token)
            listener.yield(transaction)
        }
        askToBuy.removeAll()
    }

    func unfinished() async -> [StoreTransaction] {
        charged.filter { unfinishedIDs.contains($0.id) }
    }

    /// What `Transaction.currentEntitlements` lists: the transactions of these products (App Store ids).
    private(set) var entitledProducts: Set<String> = []
    func entitle(_ productID: String) { entitledProducts.insert(productID) }

    func currentEntitlements() async -> [StoreTransaction] {
        // A device that cannot verify (`verifies` false) gives every transaction as unverified, old ones too.
        charged.filter { entitledProducts.contains($0.productID) }.map { transaction in
            var read = transaction
            if !verifies { read.verificationFailure = "invalidSignature" }
            return read
        }
    }

    nonisolated func updates() -> AsyncStream<StoreTransaction> {
        let (stream, continuation) = AsyncStream<StoreTransaction>.makeStream()
        listener.replace(continuation)
        return stream
    }

    nonisolated func purchaseIntents() -> AsyncStream<StorePurchaseIntent> {
        let (stream, continuation) = AsyncStream<StorePurchaseIntent>.makeStream()
        intents.replace(continuation)
        return stream
    }

    func finish(_ transaction: StoreTransaction) async -> Bool {
        guard unfinishedIDs.contains(transaction.id) else { return false }
        finishCount[transaction.id, default: 0] += 1
        unfinishedIDs.removeAll { $0 == transaction.id }
        return true
    }

    /// Another process of the app finished `id` (the store holds it unfinished no more).
    func finishedElsewhere(_ id: UInt64) { unfinishedIDs.removeAll { $0 == id } }

    /// How many times `AppStore.sync()` was called (each asks the user to sign in to the App Store).
    private(set) var syncs = 0
    func sync() async throws { syncs += 1 }

    /// `count` purchases of `productID` made on this Apple ID before (another install, another app user), entitled
    /// and finished.
    func bought(_ productID: String, count: Int) {
        for _ in 0..<count { finishedElsewhere(charge(productID: productID, token: UUID()).id) }
        entitle(productID)
    }

    func showManageSubscriptions(in scene: ConfirmationScene, subscriptionGroupID: String?) async throws {
        sheets.append("manage_subscriptions" + (subscriptionGroupID.map { ":" + $0 } ?? ""))
    }

    func beginRefundRequest(transactionID: UInt64, in scene: ConfirmationScene) async throws -> Bool {
        sheets.append("refund_request:\(transactionID)")
        return true
    }

    private func charge(productID: String, token: UUID) -> StoreTransaction {
        nextID += 1
        let signed = #"{"id":\#(nextID),"product":"\#(productID)","token":"\#(token.uuidString.lowercased())"}"#
        let transaction = StoreTransaction(
            id: nextID, originalID: nextID, productID: productID, appAccountToken: token, jwsRepresentation: signed,
            verificationFailure: verifies ? nil : "invalidSignature")
        charged.append(transaction)
        unfinishedIDs.append(nextID)
        return transaction
    }
}
