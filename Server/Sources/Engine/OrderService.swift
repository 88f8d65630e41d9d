import Crypto
import Foundation
import Ledger
import OrderSafeModel

/// The active catalog and the ledger version it was stored as.
public struct ActiveCatalog: Sendable {
    public let catalog: Catalog
    public let version: CatalogVersion

    /// Stores `catalog` in the ledger (once per distinct content) and makes it the one orders are priced from.
    public static func activate(_ catalog: Catalog, in ledger: any OrderBook, at date: Date) async throws
        -> ActiveCatalog
    {
        ActiveCatalog(catalog: catalog, version: try await ledger.saveCatalog(catalog, at: date))
    }
}

/// Creates and reads a user's orders, enforcing the catalog's channel policy and idempotency keys.
public struct OrderService: Sendable {
    let ledger: any OrderBook & JobQueue
    let catalog: ActiveCatalog
    let identities: OrderIdentityGenerator
    let clock: any WallClock
    /// The channels this server has accounts for; the catalog may allow more.
    let availableChannels: Set<Channel>
    /// The channels whose orders are settled by asking the provider (a query job scheduled with each order).
    let queriedChannels: Set<Channel>
    /// When the first provider query of an order of a ``queriedChannels`` channel is due.
    let firstQueryAfter: TimeInterval
    /// One provider query per order in this interval, however often the app reports a client result.
    let clientResultQueries: Cooldown
    /// One provider query per user in this interval for an order the ledger lacks (``order(number:userID:rebuildingThrough:)``).
    let rebuildQueries: Cooldown
    /// The most unpaid orders a user may hold from the last ``unpaidWindow`` (each may cost a provider call and a
    /// query job); 0: no limit.
    let unpaidOrderLimit: Int

    /// How far back unpaid orders count against ``unpaidOrderLimit``: an abandoned App Store order stays `created`.
    static let unpaidWindow: TimeInterval = 24 * 3600
    /// The app's events an order keeps (its hints and the move to `paying`); later hints still ask the provider.
    public static let appEventsKept = 20

    public init(
        ledger: any OrderBook & JobQueue, catalog: ActiveCatalog, identities: OrderIdentityGenerator,
        clock: any WallClock,
        availableChannels: Set<Channel>, queriedChannels: Set<Channel>, firstQueryAfter: TimeInterval = 60,
        clientResultQueryInterval: TimeInterval = 5,
        unpaidOrderLimit: Int = 0
    ) {
        self.firstQueryAfter = firstQueryAfter
        self.unpaidOrderLimit = unpaidOrderLimit
        clientResultQueries = Cooldown(interval: clientResultQueryInterval, clock: clock)
        rebuildQueries = Cooldown(interval: 1, clock: clock)
        self.ledger = ledger
        self.catalog = catalog
        self.identities = identities
        self.clock = clock
        self.availableChannels = availableChannels
        self.queriedChannels = queriedChannels
    }

    /// Creates an order for `userID`; with an idempotency key already used for the same request, returns that order.
    public func createOrder(_ request: CreateOrderRequest, userID: String, idempotencyKey: String?) async throws
        -> OrderCreation
    {
        guard let product = catalog.catalog.product(id: request.productID) else {
            throw OrderError.unknownProduct(request.productID)
        }
        guard let amount = product.price(for: request.channel) else {
            throw OrderError.channelNotAllowed(
                productID: product.id, channel: request.channel, allowed: product.channels)
        }
        guard availableChannels.contains(request.channel) else { throw OrderError.channelUnavailable(request.channel) }
        try await checkUnpaidOrders(userID: userID, idempotencyKey: idempotencyKey)
        let token = idempotencyKey.map { key in
            IdempotencyToken(key: key, requestSHA256: Self.fingerprint(request))
        }
        let new = NewOrder(
            userID: userID, productID: product.id, channel: request.channel, amount: amount,
            catalogVersionID: catalog.version.id, idempotency: token, createdAt: clock.now(),
            followUp: queriedChannels.contains(request.channel)
                ? FollowUp(kind: .queryOrder, after: firstQueryAfter) : nil)
        do {
            return try await ledger.createOrder(new, identity: { identities.next(for: userID) })
        } catch LedgerError.idempotencyConflict(let key) {
            throw OrderError.idempotencyConflict(key: key)
        }
    }

    /// Refuses a new order while the user holds ``unpaidOrderLimit`` unpaid ones; a retry of an order already made
    /// (its idempotency key) still gets that order.
    private func checkUnpaidOrders(userID: String, idempotencyKey: String?) async throws {
        guard unpaidOrderLimit > 0 else { return }
        let unpaid = try await ledger.unpaidOrderCount(
            userID: userID, since: clock.now().addingTimeInterval(-Self.unpaidWindow))
        guard unpaid >= unpaidOrderLimit else { return }
        if let idempotencyKey, try await ledger.hasOrder(userID: userID, idempotencyKey: idempotencyKey) { return }
        throw OrderError.tooManyUnpaidOrders(limit: unpaidOrderLimit)
    }

    /// The order, if it exists and belongs to `userID` (another user's order is reported as not found).
    public func order(number: String, userID: String) async throws -> Order {
        guard let order = try await ledger.order(number: number), order.userID == userID else {
            throw OrderError.orderNotFound(number)
        }
        return order
    }

    /// The user's order `number`; when the ledger has no order of that number at all (lost with a database restored
    /// from an older backup), the order rebuilt from `settler`'s provider record of its payment, if that names
    /// `userID`. A provider is asked only about a number of this server's shape, at most once a second per user
    /// (503 `provider_unavailable` meanwhile: the app asks again).
    public func order(number: String, userID: String, rebuildingThrough settler: (any OrderSettler)?) async throws
        -> Order
    {
        if let order = try await ledger.order(number: number) {
            guard order.userID == userID else { throw OrderError.orderNotFound(number) }
            return order
        }
        guard let settler, OrderIdentityGenerator.isOrderNumber(number) else { throw OrderError.orderNotFound(number) }
        guard rebuildQueries.claim(userID) else {
            throw OrderError.providerUnavailable("an order the ledger lacks was looked up for this user a moment ago")
        }
        let rebuild: OrderRebuild
        do {
            rebuild = try await settler.rebuildOrder(number)
        } catch let error as LedgerError {
            throw error
        } catch {
            throw OrderError.providerUnavailable("\(error)")
        }
        guard case .rebuilt(let order) = rebuild, order.userID == userID else {
            throw OrderError.orderNotFound(number)
        }
        return order
    }

    /// The provider's id of the payment that paid the user's order `number`, if any (the first: an order is paid
    /// once).
    public func paymentID(ofOrder number: String) async throws -> String? {
        try await ledger.payments(orderNo: number).first?.providerTransactionID
    }

    /// Records the app's report of a payment (a hint; at most ``appEventsKept`` of the app's events per order), moves
    /// a new order to `paying`, and asks the provider at once; when the provider cannot be asked now, the query job
    /// is brought forward instead. The answer is the order after, and whether the provider, asked now, said it is not
    /// paid (nil when it was not asked: another channel, asked within the last seconds, or unreachable).
    public func recordClientResult(_ hint: ClientResultRequest, for order: Order, reconciler: Reconciler) async throws
        -> (order: Order, providerAnswer: ProviderAnswer?)
    {
        let now = clock.now()
        try await ledger.note(
            orderNo: order.orderNo, kind: .clientResult(hint.result.rawValue), cause: .app,
            evidence: hint.detail.map { String($0.prefix(200)) }, at: now, atMost: Self.appEventsKept)
        if hint.result == .success || hint.result == .pending {
            _ = try await ledger.transition(
                orderNo: order.orderNo, from: [.created], to: .paying, cause: .app, evidence: "client result", at: now)
        }
        guard queriedChannels.contains(order.channel), clientResultQueries.claim(order.orderNo) else {
            return (try await ledger.order(number: order.orderNo) ?? order, nil)
        }
        do {
            guard let (after, answer) = try await reconciler.ask(orderNo: order.orderNo) else { return (order, nil) }
            return (after, answer == .unpaid && !after.status.isFinal ? .notPaid : nil)
        } catch {
            try await ledger.enqueue(NewJob(kind: .queryOrder, key: order.orderNo, runAt: now))
            return (try await ledger.order(number: order.orderNo) ?? order, nil)
        }
    }

    /// Cancels the user's unpaid order, closing it at the provider first so it can no longer be paid.
    public func cancel(number: String, userID: String, settler reconciler: Reconciler) async throws -> Order {
        let order = try await order(number: number, userID: userID)
        guard order.status == .created || order.status == .paying else {
            if order.status == .cancelled { return order }
            throw OrderError.notCancellable(orderNo: order.orderNo, status: order.status)
        }
        let after: Order
        do {
            after = try await reconciler.cancel(order)
        } catch let error as LedgerError {
            throw error
        } catch {
            throw OrderError.providerUnavailable("\(error)")
        }
        guard after.status == .cancelled else {
            throw OrderError.notCancellable(orderNo: after.orderNo, status: after.status)
        }
        return after
    }

    /// A digest of what the request asks for, independent of JSON spelling (key order, whitespace).
    static func fingerprint(_ request: CreateOrderRequest) -> String {
        let canonical = "product_id=\(request.productID)\nchannel=\(request.channel.rawValue)"
        return SHA256.hash(data: Data(canonical.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
