import Foundation

/// For the server's code (`@_spi(OrderSafeServer)`), not an app's: OrderSafeKit re-exports this module, and an app that
/// also imports another library with this common pair saw every `Date(millisecondsSince1970:)` fail to compile
/// ("ambiguous use of 'init(millisecondsSince1970:)'", swiftc 6.3; an app's own extension shadows ours).
extension Date {
    /// Milliseconds since 1970: how the ledger stores instants and how Apple's APIs date things. Saturates at
    /// `Int64`'s bounds instead of trapping (a date made from an outside `Int64.max` milliseconds rounds above it).
    @_spi(OrderSafeServer) public var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded(.down)
        if let exact = Int64(exactly: milliseconds) { return exact }
        return milliseconds.isNaN ? 0 : milliseconds > 0 ? .max : .min
    }

    @_spi(OrderSafeServer) public init(millisecondsSince1970 ms: Int64) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }
}
