import Foundation

extension Date {
    /// Milliseconds since 1970: how the ledger stores instants and how Apple's APIs date things. Saturates at
    /// `Int64`'s bounds instead of trapping (a date made from an outside `Int64.max` milliseconds rounds above it).
    public var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded(.down)
        if let exact = Int64(exactly: milliseconds) { return exact }
        return milliseconds.isNaN ? 0 : milliseconds > 0 ? .max : .min
    }

    public init(millisecondsSince1970 ms: Int64) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }
}
