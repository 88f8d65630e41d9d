import SQLKit

extension SQLQueryString {
    /// A value of one of the ledger's own types as an SQL string literal: its raw value, quoted by the dialect. What
    /// a text column holds comes from a Swift type, and so do the constants the statements compare it with.
    public mutating func appendInterpolation<Value: RawRepresentable>(literal value: Value)
    where Value.RawValue == String {
        appendInterpolation(literal: value.rawValue)
    }

    /// Several such values, each a literal, joined by `joiner` (`IN (…)` lists).
    public mutating func appendInterpolation<Value: RawRepresentable>(literals values: [Value], joinedBy joiner: String)
    where Value.RawValue == String {
        appendInterpolation(literals: values.map(\.rawValue), joinedBy: joiner)
    }
}
