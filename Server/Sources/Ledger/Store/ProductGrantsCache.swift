import OrderSafeModel
import Synchronization

/// What each product of each stored catalog version grants, decoded once: a version's products never change once
/// stored, and decoding the definition on every payment cost the writer 4% of its time in the profile.
final class ProductGrantsCache: Sendable {
    private struct Key: Hashable {
        var catalogVersionID: Int64
        var productID: String
    }

    /// More entries than any real set of catalogs has; past it the cache starts over rather than grow.
    private static let limit = 10_000
    private let entries = Mutex<[Key: [Grant]]>([:])

    /// The grants of a product of a catalog version, from `load` the first time.
    func grants(catalogVersionID: Int64, productID: String, load: () async throws -> [Grant]) async throws -> [Grant] {
        let key = Key(catalogVersionID: catalogVersionID, productID: productID)
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let loaded = try await load()
        entries.withLock { entries in
            if entries.count >= Self.limit { entries.removeAll() }
            entries[key] = loaded
        }
        return loaded
    }
}
