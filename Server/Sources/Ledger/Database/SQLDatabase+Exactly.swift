import SQLKit

extension SQLDatabase {
    /// This database as `type` when it is exactly one (the ledger's connection classes are final): one comparison of
    /// its type, then its reference read as that class. `as?` from an `any SQLDatabase` ran the runtime's general
    /// cast, ~770 instructions each and 13 of them a fresh submission (`scripts/bench/instructions`).
    func exactly<Connection: SQLDatabase & AnyObject>(_ type: Connection.Type) -> Connection? {
        guard Self.self == Connection.self else { return nil }
        return withUnsafeBytes(of: self) { $0.load(as: Connection.self) }
    }
}
