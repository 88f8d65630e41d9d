import Foundation

extension UUID {
    /// The UUID as its 36 characters (hexadecimal digits grouped 8-4-4-4-12), upper case as `uuidString` writes them
    /// or lower case as the ledger stores them. Foundation on Linux formats `uuidString` with the C library's
    /// `snprintf` (its `uuid_unparse`), and a fresh App Store submission formatted two (the order's row and the
    /// answer's JSON): `vfprintf` was 0.3% of the server's samples. For the server only (`@_spi(OrderSafeServer)`):
    /// an app's `UUID` gains no member.
    @_spi(OrderSafeServer) public func text(lowercase: Bool = false) -> String {
        let digits: StaticString = lowercase ? "0123456789abcdef" : "0123456789ABCDEF"
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = digits.utf8Start[Int(byte >> 4)]
                    text[position + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }
}
