import Foundation

extension Date {
    /// Milliseconds since 1970: how the ledger stores instants and how Apple's APIs date things.
    public var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    public init(millisecondsSince1970 ms: Int64) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }
}
