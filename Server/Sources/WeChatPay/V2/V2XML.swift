/// The flat XML documents of API v2 (`<xml><key>value</key>…</xml>`, values plain or in CDATA), read safely:
/// no DTD, no entities beyond the five predefined and numeric references, no nesting, bounded size and count.
public enum V2XML {
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case forbidden(String)
        case malformed(String)

        public var description: String {
            switch self {
            case .tooLarge(let size): "XML body of \(size) bytes exceeds the limit"
            case .forbidden(let what): "XML \(what) is not allowed"
            case .malformed(let detail): "malformed XML: \(detail)"
            }
        }
    }

    public static let maxBytes = 64 * 1024
    public static let maxFields = 128

    /// The fields of a v2 document. Duplicate names are refused: a signature must cover exactly one value each.
    public static func parse(_ bytes: [UInt8], root: String = "xml") throws(Error) -> [String: String] {
        guard bytes.count <= maxBytes else { throw .tooLarge(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformed("not UTF-8") }
        var scanner = Substring(text)
        scanner = scanner.drop(while: \.isWhitespace)
        if scanner.hasPrefix("<?xml") {
            guard let end = scanner.range(of: "?>") else { throw .malformed("unterminated XML declaration") }
            scanner = scanner[end.upperBound...].drop(while: \.isWhitespace)
        }
        if scanner.hasPrefix("<!") { throw .forbidden("DTD or entity declaration") }
        guard scanner.hasPrefix("<\(root)>") else { throw .malformed("the root element must be <\(root)>") }
        scanner = scanner.dropFirst(root.count + 2)
        var fields: [String: String] = [:]
        while true {
            scanner = scanner.drop(while: \.isWhitespace)
            if scanner.hasPrefix("</\(root)>") {
                guard scanner.dropFirst(root.count + 3).allSatisfy(\.isWhitespace) else {
                    throw .malformed("content after </\(root)>")
                }
                return fields
            }
            if scanner.hasPrefix("<!") || scanner.hasPrefix("<?") {
                throw .forbidden("declaration or processing instruction")
            }
            guard scanner.hasPrefix("<"), let close = scanner.firstIndex(of: ">") else {
                throw .malformed("expected an element")
            }
            let name = scanner[scanner.index(after: scanner.startIndex)..<close]
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw .malformed("bad element name '\(name.prefix(40))'")
            }
            scanner = scanner[scanner.index(after: close)...]
            var value = ""
            if scanner.hasPrefix("<![CDATA[") {
                // One or more adjacent CDATA sections (a value holding "]]>" is split in two).
                while scanner.hasPrefix("<![CDATA[") {
                    guard let end = scanner.range(of: "]]>") else {
                        throw .malformed("unterminated CDATA in <\(name)>")
                    }
                    value += scanner[scanner.index(scanner.startIndex, offsetBy: 9)..<end.lowerBound]
                    scanner = scanner[end.upperBound...]
                }
            } else {
                guard let end = scanner.firstIndex(of: "<") else { throw .malformed("unterminated <\(name)>") }
                value = try unescape(scanner[..<end])
                scanner = scanner[end...]
            }
            let closing = "</\(name)>"
            guard scanner.hasPrefix(closing) else { throw .forbidden("nested element in <\(name)>") }
            scanner = scanner.dropFirst(closing.count)
            guard fields.updateValue(value, forKey: String(name)) == nil else {
                throw .malformed("duplicate <\(name)>")
            }
            guard fields.count <= maxFields else { throw .malformed("more than \(maxFields) fields") }
        }
    }

    /// A v2 document with every value in CDATA, keys sorted.
    public static func render(_ fields: [String: String]) -> String {
        "<xml>"
            + fields.sorted { $0.key < $1.key }.map { key, value in
                "<\(key)><![CDATA[\(value.replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>"))]]></\(key)>"
            }.joined() + "</xml>"
    }

    private static func unescape(_ text: Substring) throws(Error) -> String {
        guard text.contains("&") else { return String(text) }
        var output = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            output += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semicolon) <= 10 else {
                throw .malformed("bad character reference")
            }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "lt": output += "<"
            case "gt": output += ">"
            case "amp": output += "&"
            case "quot": output += "\""
            case "apos": output += "'"
            default:
                let number: UInt32? =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst(), radix: 10) : nil
                guard let number, let scalar = Unicode.Scalar(number) else {
                    throw .forbidden("entity '&\(entity.prefix(12));'")
                }
                output.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return output + rest
    }
}
