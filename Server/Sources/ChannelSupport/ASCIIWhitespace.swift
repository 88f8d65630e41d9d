/// JSON's and a compact JWS's white space: space, tab, line feed, carriage return.
public enum ASCIIWhitespace {
    public static func contains(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// `bytes` without the white space around it.
    public static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !contains($0) }),
            let last = bytes.lastIndex(where: { !contains($0) })
        else { return [] }
        return bytes[first...last]
    }
}
