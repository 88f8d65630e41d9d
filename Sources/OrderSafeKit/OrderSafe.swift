import Foundation
import OrderSafeModel

/// OrderSafeKit's one entry point: create it once at launch, call ``start()``, and buy through
/// ``purchase(_:through:confirmIn:)`` for every channel.
///
/// The rules it keeps: an order exists (and is journaled) before any store or provider is asked to pay; a StoreKit
/// transaction is finished only after the server answered `recorded` for that very transaction; a provider app's
/// result is a hint, and only the server's word makes an order paid; whatever was on its way when the app was killed
/// is resumed at the next ``start()`` or ``resume()``; what it shows belongs to the signed-in user (``logIn(_:)``).
public actor OrderSafe {
    let configuration: OrderSafeConfiguration
    let store: any StoreClient
    let api: OrderSafeAPI
    let journal: PurchaseJournal
    let hub: EventHub
    let entitlementCache: UserCache<HoldingsResponse>
    let subscriptionCache: UserCache<SubscriptionsResponse>
    private var listener: Task<Void, Never>?
    private var intentListener: Task<Void, Never>?
    /// Hears the app become active (``OrderSafeConfiguration/activations``).
    private var activationListener: Task<Void, Never>?
    /// Transactions being recorded now: a purchase, the listener and a sweep that meet one share its one recording
    /// and its outcome.
    var recordings: [UInt64: Task<PurchaseOutcome?, Never>] = [:]
    /// Journal entries being worked on now (a purchase and a sweep never act on one at the same time).
    var entriesInFlight: Set<UUID> = []
    /// The purchases on their way now, by user and product: one at a time each (two taps, one order, one charge).
    var purchasesInFlight: Set<String> = []
    var catalog: CatalogResponse?
    /// Who is signed in (``logIn(_:)``); nil: nobody, and nothing is bought, shown or asked for.
    public private(set) var userID: String?

    public init(
        configuration: OrderSafeConfiguration, store: any StoreClient = StoreKitClient(),
        transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.configuration = configuration
        userID = configuration.userID
        hub = EventHub(userID: configuration.userID)
        self.store = store
        api = OrderSafeAPI(
            baseURL: configuration.serverURL, token: configuration.token,
            refresh: configuration.refreshToken.map(TokenRefresh.init), transport: transport)
        journal = PurchaseJournal(directory: configuration.journalDirectory)
        entitlementCache = UserCache(file: configuration.journalDirectory.appendingPathComponent("entitlements.cache"))
        subscriptionCache = UserCache(
            file: configuration.journalDirectory.appendingPathComponent("subscriptions.cache"))
    }

    /// Starts the one transaction listener (`Transaction.updates`) and the promoted purchases' (`PurchaseIntent`),
    /// and resumes everything on its way. Call it at launch; calling it again (on foreground) only resumes.
    @discardableResult
    public func start() async -> [PurchaseOutcome] {
        if listener == nil {
            let updates = store.updates()
            listener = Task { [weak self] in
                for await transaction in updates {
                    guard let self else { return }
                    _ = await self.process(transaction)
                }
            }
            let intents = store.purchaseIntents()
            intentListener = Task { [weak self] in
                for await intent in intents {
                    guard let self else { return }
                    await self.promoted(intent)
                }
            }
            let activations = configuration.activations.events()
            activationListener = Task { [weak self] in
                for await _ in activations {
                    guard let self else { return }
                    await self.appBecameActive()
                }
            }
        }
        return await resume()
    }

    /// The app is active again: a buyer back from Alipay or WeChat Pay without their answer is not left waiting
    /// (each bridge's `appBecameActive()`: after its grace the server is asked instead), and whatever was on its way
    /// is resumed. OrderSafe calls it itself on every activation it observes (``OrderSafeConfiguration/activations``);
    /// an app that opted out calls it where it sees the app become active.
    @discardableResult
    public func appBecameActive() async -> [PurchaseOutcome] {
        for bridge in ProviderPayments.bridges(configuration) { await bridge.appBecameActive() }
        return await resume()
    }

    // MARK: Identity

    /// The user the token (``OrderSafeConfiguration/token``) now belongs to: purchases are theirs, entitlements and
    /// outcomes shown are theirs only. Resumes what was on its way (what another user left is carried through for
    /// its owner, and not shown). Call it at sign-in, and at launch when a user is signed in.
    @discardableResult
    public func logIn(_ userID: String) async -> [PurchaseOutcome] {
        self.userID = userID
        hub.send(.signedIn(userID: userID))
        return await resume()
    }

    /// Nobody is signed in: nothing is bought or shown, and the signed-out user's cached entitlements are removed
    /// from the device. Purchases on their way stay in the journal for the next sign-in.
    public func logOut() async {
        userID = nil
        await entitlementCache.clear()
        await subscriptionCache.clear()
        hub.send(.signedOut)
    }

    /// Stops the listeners (tests, sign-out). Purchases on their way stay in the journal.
    public func stop() {
        listener?.cancel()
        listener = nil
        intentListener?.cancel()
        intentListener = nil
        activationListener?.cancel()
        activationListener = nil
        hub.finish()
    }

    /// Events for the UI, from now on. Every call opens a stream of its own.
    public nonisolated func events() -> AsyncStream<OrderSafeEvent> {
        hub.stream()
    }

    /// What the events so far add up to: products, the signed-in user's entitlements, this session's purchases.
    public nonisolated func snapshot() -> OrderSafeSnapshot {
        hub.snapshot
    }

    /// The snapshot as of now and every event after it, taken together (nothing missed, nothing seen twice).
    public nonisolated func follow() -> (snapshot: OrderSafeSnapshot, events: AsyncStream<OrderSafeEvent>) {
        hub.follow()
    }

    // MARK: Products

    /// The catalog's products with the App Store's details, cheapest first; also sent as ``OrderSafeEvent/productsLoaded(_:)``.
    public func products() async throws(OrderSafeError) -> ProductList {
        let catalog = try await loadCatalog(fresh: true)
        let ids = catalog.products.compactMap(\.appStoreProductID)
        var details: [StoreProduct] = []
        if !ids.isEmpty {
            do {
                details = try await store.products(for: ids)
            } catch let failure as StoreFailure {
                throw .store(failure)
            } catch {
                throw .store(.other("\(error)"))
            }
        }
        let list = ProductList(catalog: catalog.products, store: details, canMakePayments: await store.canMakePayments)
        hub.send(.productsLoaded(list))
        return list
    }

    /// The server's catalog: the one already loaded unless `fresh` (``products()`` always asks again).
    func loadCatalog(fresh: Bool = false) async throws(OrderSafeError) -> CatalogResponse {
        if !fresh, let catalog { return catalog }
        do {
            let loaded = try await api.catalog()
            catalog = loaded
            return loaded
        } catch let problem as ServerProblem {
            throw .server(problem)
        } catch {
            throw .server(.malformedAnswer("\(error)"))
        }
    }

    // MARK: Purchase

    /// Buys `productID` (a catalog id) through `channel`, and returns when the purchase reached an outcome or a
    /// state it resumes from by itself (``PurchaseOutcome/State/pending``, ``PurchaseOutcome/State/awaitingConfirmation``).
    /// - Parameters:
    ///   - productID: the catalog id of the product (``ProductOffer/id``).
    ///   - channel: the App Store, Alipay or WeChat Pay; the catalog says which the product is sold through.
    ///   - scene: the scene of the Buy button, over which StoreKit shows its sheet (iOS 17+, tvOS 17+, visionOS;
    ///     Apple's recommended call in apps with several scenes). Without one, StoreKit places the sheet itself; on
    ///     visionOS the foreground scene is taken.
    public func purchase(_ productID: String, through channel: Channel, confirmIn scene: ConfirmationScene? = nil)
        async -> PurchaseOutcome
    {
        await buy(productID, through: channel, offer: nil, confirmIn: scene)
    }

    /// ``purchase(_:through:confirmIn:)``, with subscription offer `offerID` (App Store only) signed by the server.
    func buy(_ productID: String, through channel: Channel, offer offerID: String?, confirmIn scene: ConfirmationScene?)
        async -> PurchaseOutcome
    {
        let failed = { (error: OrderSafeError) in
            PurchaseOutcome(orderNo: nil, productID: productID, channel: channel, state: .failed(error))
        }
        guard let userID else { return failed(.server(.signedOut)) }
        // One purchase per user and product at a time: a second tap while the first is on its way makes no order.
        let purchaseKey = userID + "\u{0}" + productID
        guard purchasesInFlight.insert(purchaseKey).inserted else { return failed(.purchaseInProgress(productID)) }
        defer { purchasesInFlight.remove(purchaseKey) }
        let product: CatalogProduct
        do {
            // A product missing from the catalog loaded earlier may have been added since: ask once more.
            var found = try await loadCatalog().products.first { $0.id == productID }
            if found == nil { found = try await loadCatalog(fresh: true).products.first { $0.id == productID } }
            guard let found else { return failed(.productNotFound(productID)) }
            product = found
        } catch {
            return failed(error)
        }
        guard product.channels.contains(channel) else {
            return failed(.channelNotOffered(productID: productID, channel: channel))
        }
        if channel == .appStore {
            guard product.appStoreProductID != nil else {
                return failed(.channelNotOffered(productID: productID, channel: channel))
            }
            guard await store.canMakePayments else { return failed(.paymentsNotAllowed) }
        } else {
            guard ProviderPayments.payment(of: channel, configuration) != nil else {
                return failed(.bridgeMissing(channel))
            }
        }
        var entry = JournalEntry(id: UUID(), productID: productID, channel: channel, at: configuration.now())
        entry.userID = userID
        // In flight before it is on disk: a sweep that runs while the intent is written never takes it.
        entriesInFlight.insert(entry.id)
        defer { entriesInFlight.remove(entry.id) }
        do {
            try await journal.write(entry)
        } catch {
            return failed(.journalUnavailable(PurchaseJournal.reason(error)))
        }
        let response: OrderResponse
        do {
            response = try await createOrder(&entry)
        } catch {
            if !error.isRetryable { await journal.remove(entry.id) }
            return report(failed(.server(error)), of: userID)
        }
        guard channel == .appStore else { return await payThroughProvider(entry, response: response) }
        let signed: SignedPurchaseOptions
        do {
            signed = try await signedOptions(for: product, order: response.order, offer: offerID)
        } catch {
            // Nothing was charged: the order is given up, and the app hears why the offer was not signed.
            await giveUp(entry)
            return report(
                PurchaseOutcome(
                    orderNo: response.order.orderNo, productID: productID, channel: channel,
                    state: .failed(.server(error))), of: userID)
        }
        return await buyFromAppStore(entry, product: product, order: response.order, signed: signed, confirmIn: scene)
    }

    /// Creates the entry's order (or finds it again: the entry's id is the `Idempotency-Key`) and journals it.
    func createOrder(_ entry: inout JournalEntry) async throws(ServerProblem) -> OrderResponse {
        let response: OrderResponse
        do {
            response = try await api.createOrder(
                productID: entry.productID, channel: entry.channel, idempotencyKey: entry.id.uuidString.lowercased())
        } catch let problem as ServerProblem {
            throw problem
        } catch {
            throw .malformedAnswer("\(error)")
        }
        entry.orderNo = response.order.orderNo
        entry.orderUUID = response.order.orderUUID
        entry.stage = .ordered
        try? await save(&entry)
        hub.send(
            .orderCreated(orderNo: response.order.orderNo, productID: entry.productID, channel: entry.channel),
            of: entry.userID)
        return response
    }

    /// Writes a new stage of `entry`. A write that fails is logged; the step it precedes still runs, since
    /// StoreKit's own queue and the server's order keep the purchase recoverable without the journal.
    func save(_ entry: inout JournalEntry) async throws {
        entry.updatedAt = configuration.now()
        do {
            try await journal.write(entry)
        } catch {
            log(
                .error, "journal write failed",
                ["order_no": entry.orderNo ?? "-", "reason": PurchaseJournal.reason(error)])
            throw error
        }
    }

    /// Sends the outcome of `owner`'s purchase to the UI (if `owner` is still the one signed in) and returns it.
    func report(_ outcome: PurchaseOutcome, of owner: String?) -> PurchaseOutcome {
        var outcome = outcome
        outcome.userID = owner
        hub.send(.purchaseOutcome(outcome), of: owner)
        log(.info, "purchase outcome", ["order_no": outcome.orderNo ?? "-", "outcome": outcome.name])
        return outcome
    }

    func log(_ level: OrderSafeLogRecord.Level, _ message: String, _ metadata: [String: String] = [:]) {
        configuration.log?(OrderSafeLogRecord(level: level, message: message, metadata: metadata))
    }

    /// True when nothing is on its way: no purchase in the journal but those waiting for Ask to Buy, closed orders
    /// watched for a late approval, and purchases whose news waits for another user of this device; and no unfinished
    /// transaction in the store but those recorded and left unfinished because this device could not verify them, and
    /// approvals waiting for the other user of this device who asked for them.
    public func isSettled() async -> Bool {
        let (entries, _) = await journal.entries()
        let waiting = entries.allSatisfy {
            switch $0.stage {
            case .pendingApproval, .recorded, .closedWatching: true
            case .recordedForOwner: $0.userID != userID
            case .intent, .ordered, .submitting, .awaitingProvider: false
            }
        }
        guard waiting else { return false }
        let recorded = Set(entries.filter { $0.stage == .recorded }.compactMap(\.transactionID))
        for transaction in await store.unfinished() where !recorded.contains(transaction.id) {
            guard heldForRequester(transaction, await journalEntry(for: transaction)) else { return false }
        }
        return true
    }

    // MARK: Entitlements and restore

    /// The signed-in user's balances and entitlements: from the server, or when it cannot be reached and
    /// `allowCached`, the last ones it gave that user (kept on disk for offline reads). Signed out: nothing.
    public func entitlements(allowCached: Bool = true) async throws(OrderSafeError) -> HoldingsResponse {
        try await signedInUsers(
            allowCached: allowCached, cache: entitlementCache, changed: { .entitlementsChanged($0) }
        ) {
            try await $0.entitlements()
        }
    }

    /// Something of the signed-in user's from the server (kept in `cache`, announced when it changed), or when the
    /// server cannot be reached and `allowCached`, the last one it gave that user. Signed out: nothing.
    func signedInUsers<Value: UserOwned>(
        allowCached: Bool, cache: UserCache<Value>, changed: (Value) -> OrderSafeEvent,
        _ fetch: (OrderSafeAPI) async throws -> Value
    ) async throws(OrderSafeError) -> Value {
        guard let asked = userID else { throw .server(.signedOut) }
        let value: Value
        do {
            value = try await fetch(api)
        } catch let problem as ServerProblem {
            if allowCached, problem.isRetryable, let cached = await cache.load(for: asked) { return cached }
            throw .server(problem)
        } catch {
            throw .server(.malformedAnswer("\(error)"))
        }
        // The token the app gave is another user's than the one signed in: show neither.
        guard value.userID == asked else { throw .server(.tokenOfAnotherUser) }
        // Another user signed in (or nobody) while it was asked: the answer is not theirs to see or keep.
        guard userID == asked else { throw .server(.userChanged) }
        if await cache.store(value), userID == asked { hub.send(changed(value), of: asked) }
        return value
    }

    /// Restore: with a user signed in to the app (else nothing is asked, not even the App Store's sign-in),
    /// `AppStore.sync()` (which asks the user to sign in to the App Store, so call it from a button), then every
    /// unfinished transaction is recorded, then `POST /v1/appstore/sync` with what the store holds, a hundred at a
    /// time. Answers the user's holdings and the server's word on each transaction: those it recorded for another
    /// account are ``RestoreResult/ownedByOtherAccounts`` (tell the user they belong to another account).
    public func restore() async throws(OrderSafeError) -> RestoreResult {
        guard userID != nil else { throw .server(.signedOut) }
        do {
            try await store.sync()
        } catch let failure as StoreFailure {
            throw .store(failure)
        } catch {
            throw .store(.other("\(error)"))
        }
        _ = await resume()
        let signed = await store.currentEntitlements().filter(\.isVerified).map(\.jwsRepresentation)
        var answers: [AppStoreTransactionResult] = []
        for start in stride(from: 0, to: signed.count, by: RestoreResult.perRequest) {
            do {
                answers += try await api.sync(
                    signedTransactions: Array(signed[start..<min(signed.count, start + RestoreResult.perRequest)])
                ).transactions
            } catch let problem as ServerProblem {
                throw .server(problem)
            } catch {
                throw .server(.malformedAnswer("\(error)"))
            }
        }
        return RestoreResult(holdings: try await entitlements(allowCached: false), transactions: answers)
    }

    func refreshEntitlements() async {
        _ = try? await entitlements(allowCached: false)
    }
}
