import Foundation

/// Base64url without padding (RFC 7515).
public enum Base64URL {
    /// Decodes in one pass into one array (through Foundation's standard decoder it was four copies, on every
    /// request's token and signed transaction): `=` is skipped wherever it stands; any other byte outside the
    /// alphabet, or a length leaving one character over, is refused; the unused low bits of a last partial group are
    /// ignored, as Foundation's decoder ignores them.
    public static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var valid = true
        // Written in place into the array's storage: an append's capacity check on each byte was half the decode.
        let output = sextets.withUnsafeBufferPointer { table in
            text.withUnsafeBufferPointer { text in
                [UInt8](unsafeUninitializedCapacity: text.count / 4 * 3 + 2) { output, count in
                    var group: UInt32 = 0
                    var held = 0
                    var index = 0
                    while index < text.count {
                        // Four symbols at once while a group starts here and none of them is padding or outside the
                        // alphabet (each of those has the top bit set): half the decode's instructions.
                        if held == 0, text.count - index >= 4 {
                            let (a, b) = (table[Int(text[index])], table[Int(text[index + 1])])
                            let (c, d) = (table[Int(text[index + 2])], table[Int(text[index + 3])])
                            if (a | b | c | d) & 0x80 == 0 {
                                let bits = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                                output[count] = UInt8(truncatingIfNeeded: bits >> 16)
                                output[count + 1] = UInt8(truncatingIfNeeded: bits >> 8)
                                output[count + 2] = UInt8(truncatingIfNeeded: bits)
                                count += 3
                                index += 4
                                continue
                            }
                        }
                        let value = table[Int(text[index])]
                        index += 1
                        if value == padding { continue }
                        guard value != invalid else {
                            valid = false
                            break
                        }
                        group = group << 6 | UInt32(value)
                        held += 1
                        if held == 4 {
                            output[count] = UInt8(truncatingIfNeeded: group >> 16)
                            output[count + 1] = UInt8(truncatingIfNeeded: group >> 8)
                            output[count + 2] = UInt8(truncatingIfNeeded: group)
                            count += 3
                            (group, held) = (0, 0)
                        }
                    }
                    switch held {
                    case 0: break
                    case 2:
                        output[count] = UInt8(truncatingIfNeeded: group >> 4)
                        count += 1
                    case 3:
                        output[count] = UInt8(truncatingIfNeeded: group >> 10)
                        output[count + 1] = UInt8(truncatingIfNeeded: group >> 2)
                        count += 2
                    default: valid = false  // one character over
                    }
                }
            }
        }
        return valid ? output : nil
    }

    private static let invalid: UInt8 = 0xFF
    private static let padding: UInt8 = 0xFE

    /// Each byte's six bits, ``invalid`` or ``padding``.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, symbol) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(symbol)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()

    /// Base64url without padding (RFC 4648 §5), the standard alphabet's two symbols swapped byte by byte.
    public static func encode(_ bytes: some DataProtocol) -> String {
        var text = Array(Data(bytes).base64EncodedData())
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        for index in text.indices {
            switch text[index] {
            case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
