/// The rule for merchant-chosen identifiers (product ids, balance and entitlement names), which the server checks
/// catalogs by. The server's (`@_spi(OrderSafeServer)`): OrderSafeKit re-exports this module, and a type of this name in
/// another library an app imports would make every unqualified `Identifier` of the app ambiguous.
@_spi(OrderSafeServer) public enum Identifier {
    /// True when `text` is 1 to 64 characters of `a-z`, `0-9`, `_`, `.`, `-`.
    @_spi(OrderSafeServer) public static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            }
    }
}
