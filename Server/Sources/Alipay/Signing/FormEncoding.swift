import Foundation

/// Strict `application/x-www-form-urlencoded` reading and writing for Alipay's wire formats.
public enum FormEncoding {
    /// Why a form body was refused.
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case tooLarge(limit: Int)
        case tooManyFields(limit: Int)
        case malformedPair(String)
        case badPercentEncoding(field: String)
        case notUTF8(field: String)
        case duplicateField(String)

        public var description: String {
            switch self {
            case .tooLarge(let limit): "the form body exceeds \(limit) bytes"
            case .tooManyFields(let limit): "the form body has more than \(limit) fields"
            case .malformedPair(let pair): "'\(pair.prefix(40))' is not a name=value pair"
            case .badPercentEncoding(let field): "field '\(field)' has a broken %-escape"
            case .notUTF8(let field): "field '\(field)' is not UTF-8 (charset must be utf-8; GBK is not accepted)"
            case .duplicateField(let field): "field '\(field)' appears more than once"
            }
        }
    }

    /// Parses `a=1&b=x+y%20z` into fields (`+` is a space), refusing duplicates, bad escapes and non-UTF-8.
    public static func parse(_ body: [UInt8], maxBytes: Int = 64 * 1024, maxFields: Int = 128) throws(Error) -> [String:
        String]
    {
        try FormFields(parsing: body, maxBytes: maxBytes, maxFields: maxFields).dictionary
    }

    /// Encodes fields sorted by name, escaping everything but `A-Z a-z 0-9 - _ .` (space as `%20`).
    public static func encode(_ fields: [String: String]) -> String {
        fields.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { "\(escape($0.key))=\(escape($0.value))" }
            .joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output += String(format: "%%%02X", byte)
            }
        }
        return output
    }
}
