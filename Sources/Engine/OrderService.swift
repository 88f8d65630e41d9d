import Crypto
import Foundation
import Ledger
import OrderSafeModel

/// The active catalog and the ledger version it was stored as.
public struct ActiveCatalog: Sendable {
    public let catalog: Catalog
    public let version: CatalogVersion

    /// Stores `catalog` in the ledger (once per distinct content) and makes it the one orders are priced from.
    public static func activate(_ catalog: Catalog, in ledger: any LedgerStore, at date: Date) async throws -> ActiveCatalog {
        ActiveCatalog(catalog: catalog, version: try await ledger.saveCatalog(catalog, at: date))
    }
}

/// Creates and reads a user's orders, enforcing the catalog's channel policy and idempotency keys.
public struct OrderService: Sendable {
    let ledger: any LedgerStore
    let catalog: ActiveCatalog
    let identities: OrderIdentityGenerator
    let clock: any WallClock
    /// The channels this server has accounts for; the catalog may allow more.
    let availableChannels: Set<Channel>

    public init(
        ledger: any LedgerStore, catalog: ActiveCatalog, identities: OrderIdentityGenerator, clock: any WallClock,
        availableChannels: Set<Channel>
    ) {
        self.ledger = ledger
        self.catalog = catalog
        self.identities = identities
        self.clock = clock
        self.availableChannels = availableChannels
    }

    /// Creates an order for `userID`; with an idempotency key already used for the same request, returns that order.
    public func createOrder(_ request: CreateOrderRequest, userID: String, idempotencyKey: String?) async throws -> OrderCreation {
        guard let product = catalog.catalog.product(id: request.productID) else {
            throw OrderError.unknownProduct(request.productID)
        }
        guard let amount = product.price(for: request.channel) else {
            throw OrderError.channelNotAllowed(productID: product.id, channel: request.channel, allowed: product.channels)
        }
        guard availableChannels.contains(request.channel) else { throw OrderError.channelUnavailable(request.channel) }
        let token = idempotencyKey.map { key in
            IdempotencyToken(key: key, requestSHA256: Self.fingerprint(request))
        }
        let new = NewOrder(
            userID: userID, productID: product.id, channel: request.channel, amount: amount,
            catalogVersionID: catalog.version.id, idempotency: token, createdAt: clock.now())
        do {
            return try await ledger.createOrder(new, identity: { identities.next() })
        } catch LedgerError.idempotencyConflict(let key) {
            throw OrderError.idempotencyConflict(key: key)
        }
    }

    /// The order, if it exists and belongs to `userID` (another user's order is reported as not found).
    public func order(number: String, userID: String) async throws -> Order {
        guard let order = try await ledger.order(number: number), order.userID == userID else {
            throw OrderError.orderNotFound(number)
        }
        return order
    }

    /// A digest of what the request asks for, independent of JSON spelling (key order, whitespace).
    static func fingerprint(_ request: CreateOrderRequest) -> String {
        let canonical = "product_id=\(request.productID)\nchannel=\(request.channel.rawValue)"
        return SHA256.hash(data: Data(canonical.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
