import Foundation
import OrderSafeModel

/// The signed-in user's entitlements to show now, and how sure they are.
public struct ShownEntitlements: Sendable, Hashable {
    /// Where they come from.
    public enum Source: String, Sendable, Hashable {
        /// The server's answer now.
        case server
        /// Offline: the last answer the server gave this user on this device.
        case cached
        /// Offline with nothing cached (a fresh install): what StoreKit's current entitlements, verified on this
        /// device, grant by the catalog. They are the phone's Apple ID's, which may have paid for another user:
        /// unconfirmed until the server answers.
        case device
    }

    public var holdings: HoldingsResponse
    public var source: Source

    /// False for what only the device says: show it as such ("unconfirmed"), and ask the server again.
    public var isConfirmed: Bool { source != .device }

    public init(holdings: HoldingsResponse, source: Source) {
        self.holdings = holdings
        self.source = source
    }
}

extension OrderSafe {
    /// The signed-in user's entitlements to show now: the server's answer; offline, the last one it gave this user;
    /// offline on a fresh install, what StoreKit's verified current entitlements grant by the catalog, marked
    /// unconfirmed (``ShownEntitlements/isConfirmed`` false: never announced as the user's, never cached). Balances
    /// come from the server only (consumables are no entitlement StoreKit keeps). Signed out: nothing.
    public func shownEntitlements() async throws(OrderSafeError) -> ShownEntitlements {
        guard let asked = userID else { throw .server(.signedOut) }
        do {
            let holdings = try await entitlements(allowCached: false)
            return ShownEntitlements(holdings: holdings, source: .server)
        } catch {
            guard case .server(let problem) = error, problem.isRetryable else { throw error }
            if let cached = await entitlementCache.load(for: asked) {
                return ShownEntitlements(holdings: cached, source: .cached)
            }
            guard let device = await deviceEntitlements(of: asked) else { throw error }
            return ShownEntitlements(holdings: device, source: .device)
        }
    }

    /// What the verified, unrevoked transactions StoreKit holds as current entitlements grant by the catalog (the
    /// one loaded, else asked for: it is public, and may come from a cache in front of the server that is down);
    /// nil without a catalog.
    func deviceEntitlements(of user: String) async -> HoldingsResponse? {
        guard let catalog = try? await loadCatalog() else { return nil }
        let now = configuration.now()
        var granted: [String: Date?] = [:]
        for transaction in await store.currentEntitlements() where transaction.isVerified {
            guard transaction.revocationDate == nil,
                let product = catalog.products.first(where: { $0.appStoreProductID == transaction.productID })
            else { continue }
            for grant in product.grants {
                let (name, ends): (String, Date?)
                switch grant {
                case .addBalance: continue
                case .unlockEntitlement(let entitlement): (name, ends) = (entitlement, nil)
                case .extendEntitlement(let entitlement, let period):
                    let start = transaction.purchaseDate ?? now
                    (name, ends) = (entitlement, transaction.expirationDate ?? period.adding(to: start))
                }
                // Several transactions grant the same entitlement: the latest end, or none (for good).
                if let known = granted[name] {
                    granted[name] = known.flatMap { known in ends.map { max(known, $0) } }
                } else {
                    granted[name] = ends
                }
            }
        }
        let entitlements = granted.keys.sorted().map { name in
            let ends = granted[name] ?? nil
            return Entitlement(name: name, expiresAt: ends, active: ends.map { $0 > now } ?? true)
        }
        return HoldingsResponse(userID: user, balances: [], entitlements: entitlements)
    }
}
