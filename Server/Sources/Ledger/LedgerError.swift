/// Failures the ledger reports as such, as opposed to database faults.
public enum LedgerError: Error, Equatable, CustomStringConvertible {
    /// The same idempotency key was used before with a different request.
    case idempotencyConflict(key: String)
    /// The database was migrated by a newer OrderSafe; this binary must not write to it.
    case schemaTooNew(database: Int, binary: Int)
    /// The database has not been migrated to this binary's schema.
    case schemaOutdated(database: Int, binary: Int)
    /// The order to fulfil does not exist.
    case unknownOrder(String)
    /// A unique order number could not be found after several tries (the random source is broken).
    case orderNumberExhausted
    /// The ledger was shut down; the write was not made.
    case closed
    /// A migration found a schema it did not expect (one not written by OrderSafe's migrations); nothing was changed.
    case unexpectedSchema(String)
    /// The PostgreSQL server is older than the ledger supports (`server_version_num`).
    case postgresTooOld(version: Int)

    public var description: String {
        switch self {
        case .idempotencyConflict(let key):
            "Idempotency-Key '\(key)' was already used with a different request"
        case .schemaTooNew(let database, let binary):
            "the database schema is at version \(database), newer than this binary's \(binary): upgrade OrderSafe"
        case .schemaOutdated(let database, let binary):
            "the database schema is at version \(database), this binary needs \(binary): run `ordersafe migrate`"
        case .unknownOrder(let orderNo):
            "no order \(orderNo)"
        case .orderNumberExhausted:
            "could not allocate a unique order number"
        case .closed:
            "the ledger is shut down; nothing was written"
        case .unexpectedSchema(let what):
            "the database schema is not one OrderSafe wrote: \(what); nothing was migrated"
        case .postgresTooOld(let version):
            "PostgreSQL \(version / 10_000) is older than the ledger supports: it needs PostgreSQL 12 or later"
        }
    }
}
