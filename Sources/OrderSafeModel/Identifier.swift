/// The rule for merchant-chosen identifiers (product ids, balance and entitlement names).
public enum Identifier {
    /// True when `text` is 1 to 64 characters of `a-z`, `0-9`, `_`, `.`, `-`.
    public static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            }
    }
}
