import Ledger
import Synchronization

/// A lookup made with a submission's inbox entry, in the same write, taken once by the step that would have made it:
/// nothing the write changed after it was made can be missing from it.
final class PrefetchedLookup: Sendable {
    private let query: PaymentQuery
    private let lookup: Mutex<PaymentLookup?>

    init(query: PaymentQuery, lookup: PaymentLookup) {
        self.query = query
        self.lookup = Mutex(lookup)
    }

    /// The lookup, the first time it is asked for with its own query; nil after that, or for another query.
    func take(_ asked: PaymentQuery) -> PaymentLookup? {
        guard asked == query else { return nil }
        return lookup.withLock { lookup in
            defer { lookup = nil }
            return lookup
        }
    }
}
