@_spi(OrderSafeServer) import OrderSafeModel

/// A JSON object read strictly and quickly: members located by ``RawJSONMembers``, values decoded only when
/// asked for. Provider payloads (notification envelopes, transactions) are small, flat and hot; this reads them
/// several times faster than a general-purpose decoder and names the member at fault on every error.
public struct JSONObject: Sendable {
    /// Why a member could not be read.
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case notAnObject(String)
        case missing(String)
        case wrongType(String, expected: String)

        public var description: String {
            switch self {
            case .notAnObject(let detail): "not a JSON object (\(detail))"
            case .missing(let name): "'\(name)' is missing"
            case .wrongType(let name, let expected): "'\(name)' is not \(expected)"
            }
        }
    }

    /// The document, shared by nested objects (no copies), and this object's members within it.
    let bytes: [UInt8]
    let members: [(name: Range<Int>, value: Range<Int>)]

    public init(_ bytes: [UInt8]) throws(Error) {
        try self.init(bytes, range: 0..<bytes.count)
    }

    public init(_ bytes: ArraySlice<UInt8>) throws(Error) {
        try self.init(Array(bytes))
    }

    init(_ bytes: [UInt8], range: Range<Int>) throws(Error) {
        do {
            members = try RawJSONMembers.scan(bytes, in: range)
        } catch {
            throw .notAnObject("\(error)")
        }
        self.bytes = bytes
        if let twice = Self.nameGivenTwice(members, in: bytes) {
            throw .notAnObject("duplicate member '\(String(decoding: bytes[twice].prefix(64), as: UTF8.self))'")
        }
    }

    /// Most pairs compared one by one at most: a provider's payload has a few dozen members, and comparing their
    /// lengths first settles nearly every pair without hashing a name or allocating a set.
    static let namesComparedInPairs = 32

    /// A name given a second time, if any: it could mean one thing to us and another to whoever checked the payload.
    /// Beyond ``namesComparedInPairs`` names, hashing keeps the check linear in the names' bytes: comparing every
    /// pair cost seconds on a crafted megabyte.
    static func nameGivenTwice(_ members: [(name: Range<Int>, value: Range<Int>)], in bytes: [UInt8]) -> Range<Int>? {
        if members.count <= namesComparedInPairs {
            for later in members.indices.dropFirst() {
                let name = members[later].name
                for earlier in members[..<later]
                where earlier.name.count == name.count && ByteScan.equal(bytes[earlier.name], bytes[name]) {
                    return name
                }
            }
            return nil
        }
        var seen = Set<ArraySlice<UInt8>>(minimumCapacity: members.count)
        return members.first { !seen.insert(bytes[$0.name]).inserted }?.name
    }

    /// Checks that no object anywhere in the JSON value `bytes` names a member twice: of two, one reader takes the
    /// first and another the last (API bodies are checked this way after they decode).
    public static func requireUniqueMembers(_ bytes: [UInt8]) throws(Error) {
        try requireUniqueMembers(bytes, in: 0..<bytes.count, depth: 0)
    }

    private static func requireUniqueMembers(_ bytes: [UInt8], in range: Range<Int>, depth: Int) throws(Error) {
        guard depth < 64 else { throw .notAnObject("nested deeper than 64 levels") }
        guard let first = bytes[range].first(where: { !ASCIIWhitespace.contains($0) }) else {
            return
        }
        if first == UInt8(ascii: "{") {
            let object = try JSONObject(bytes, range: range)
            for member in object.members { try requireUniqueMembers(bytes, in: member.value, depth: depth + 1) }
        } else if first == UInt8(ascii: "[") {
            for element in JSONArray.elements(bytes[range]) {
                try requireUniqueMembers(bytes, in: element.startIndex..<element.endIndex, depth: depth + 1)
            }
        }
    }

    /// The raw bytes of a member's value (strings keep their quotes), or nil when absent. Each name's length is
    /// compared before its bytes, in the document's own storage: slicing the document for each member compared
    /// retained and released it, half the cost of reading a transaction's two dozen members.
    public func raw(_ name: String) -> ArraySlice<UInt8>? {
        var name = name
        let found = name.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { document in
                members.firstIndex { member in
                    member.name.count == wanted.count
                        && ByteScan.equal(UnsafeBufferPointer(rebasing: document[member.name]), wanted)
                }
            }
        }
        return found.map { bytes[members[$0].value] }
    }

    public func contains(_ name: String) -> Bool { raw(name) != nil }

    /// The members' names as written (escapes undecoded), in document order.
    public var memberNames: [String] { members.map { String(decoding: bytes[$0.name], as: UTF8.self) } }

    /// A string member; `nil` when absent or `null`.
    public func optionalString(_ name: String) throws(Error) -> String? {
        guard let raw = raw(name), !Self.isNull(raw) else { return nil }
        guard let value = JSONString.decode(raw) else { throw .wrongType(name, expected: "a string") }
        return value
    }

    public func string(_ name: String) throws(Error) -> String {
        guard let value = try optionalString(name) else { throw .missing(name) }
        return value
    }

    /// An integer member (no fraction, no exponent, within Int64); `nil` when absent or `null`.
    public func optionalInt(_ name: String) throws(Error) -> Int64? {
        guard let raw = raw(name), !Self.isNull(raw) else { return nil }
        guard let value = JSONNumber.int64(raw) else { throw .wrongType(name, expected: "an integer") }
        return value
    }

    public func int(_ name: String) throws(Error) -> Int64 {
        guard let value = try optionalInt(name) else { throw .missing(name) }
        return value
    }

    /// A boolean member; `nil` when absent or `null`.
    public func optionalBool(_ name: String) throws(Error) -> Bool? {
        guard let raw = raw(name), !Self.isNull(raw) else { return nil }
        if raw.elementsEqual("true".utf8) { return true }
        if raw.elementsEqual("false".utf8) { return false }
        throw .wrongType(name, expected: "a boolean")
    }

    /// An array of strings; `nil` when absent or `null`.
    public func optionalStrings(_ name: String) throws(Error) -> [String]? {
        guard let elements = try optionalArray(name) else { return nil }
        var strings: [String] = []
        for element in elements {
            guard let string = JSONString.decode(element) else {
                throw .wrongType(name, expected: "an array of strings")
            }
            strings.append(string)
        }
        return strings
    }

    /// A number that may carry a fraction (Xcode writes dates as fractional milliseconds), rounded down to an
    /// integer; `nil` when absent or `null`.
    public func optionalFlooredInt(_ name: String) throws(Error) -> Int64? {
        guard let raw = raw(name), !Self.isNull(raw) else { return nil }
        if let value = JSONNumber.int64(raw) { return value }
        guard let text = UTF8Text.string(raw), let value = Double(text), value.isFinite, abs(value) < 9.0e15,
            raw.allSatisfy({ "0123456789.-eE+".utf8.contains($0) })
        else { throw .wrongType(name, expected: "a number") }
        return Int64(value.rounded(.down))
    }

    /// A nested object member; `nil` when absent or `null`.
    public func optionalObject(_ name: String) throws(Error) -> JSONObject? {
        guard let raw = raw(name), !Self.isNull(raw) else { return nil }
        guard raw.first == UInt8(ascii: "{") else { throw .wrongType(name, expected: "an object") }
        return try JSONObject(bytes, range: raw.startIndex..<raw.endIndex)
    }

    public func object(_ name: String) throws(Error) -> JSONObject {
        guard let value = try optionalObject(name) else { throw .missing(name) }
        return value
    }

    /// The elements of an array member, as raw slices; `nil` when absent or `null`.
    public func optionalArray(_ name: String) throws(Error) -> [ArraySlice<UInt8>]? {
        guard let raw = raw(name), !Self.isNull(raw) else { return nil }
        guard raw.first == UInt8(ascii: "[") else { throw .wrongType(name, expected: "an array") }
        return JSONArray.elements(raw)
    }

    private static func isNull(_ raw: ArraySlice<UInt8>) -> Bool { raw.elementsEqual("null".utf8) }
}

/// JSON string literals (with their quotes) to Swift strings.
public enum JSONString {
    /// Decodes a string literal including its quotes; `nil` when it is not one or holds a bad escape.
    public static func decode(_ raw: ArraySlice<UInt8>) -> String? {
        guard raw.count >= 2, raw.first == UInt8(ascii: "\""), raw.last == UInt8(ascii: "\"") else { return nil }
        let content = raw.dropFirst().dropLast()
        guard ByteScan.firstIndex(of: UInt8(ascii: "\\"), in: content) != nil else { return UTF8Text.string(content) }
        var output: [UInt8] = []
        output.reserveCapacity(content.count)
        var index = content.startIndex
        while index < content.endIndex {
            let byte = content[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                continue
            }
            guard index < content.endIndex else { return nil }
            let escape = content[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(content, &index) else { return nil }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < content.endIndex, content[index] == UInt8(ascii: "\\"),
                        content[index + 1] == UInt8(ascii: "u")
                    else { return nil }
                    index += 2
                    guard let low = hex4(content, &index), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                output.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                return nil
            }
        }
        return UTF8Text.string(output)
    }

    private static func hex4(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> UInt32? {
        guard index + 4 <= bytes.endIndex else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    /// A JSON object of string members in the order given, one member a line (a file a person reads).
    public static func object(_ members: [(name: String, value: String)]) -> String {
        "{\n" + members.map { "  \(encode($0.name)): \(encode($0.value))" }.joined(separator: ",\n") + "\n}\n"
    }

    /// A JSON string literal for `value`, quotes included.
    public static func encode(_ value: String) -> String {
        // Most text needs no escape (a JWS, an id): one pass over its bytes says so.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            return "\"" + value + "\""
        }
        var output = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}

/// JSON integers, strictly: an optional minus and digits, no leading zeros, no fraction or exponent.
public enum JSONNumber {
    public static func int64(_ raw: ArraySlice<UInt8>) -> Int64? {
        var digits = raw[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19,
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        var value: Int64 = 0
        for digit in digits {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return negative ? -value : value
    }
}

/// The top-level elements of a JSON array literal that ``RawJSONMembers`` has already validated.
enum JSONArray {
    static func elements(_ raw: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var elements: [ArraySlice<UInt8>] = []
        var depth = 0
        var inString = false
        var escaped = false
        var start = raw.startIndex + 1
        for index in raw.indices.dropFirst() {
            let byte = raw[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            let closes = byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
            if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
            } else if closes && depth > 0 {
                depth -= 1
            } else if depth == 0 && (byte == UInt8(ascii: ",") || closes) {
                let element = ASCIIWhitespace.trimmed(raw[start..<index])
                if !element.isEmpty { elements.append(element) }
                start = index + 1
            }
        }
        return elements
    }
}

/// Strict UTF-8 decoding through contiguous storage (the generic `String(validating:)` walks byte by byte).
enum UTF8Text {
    static func string(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer(string)
    }

    static func string(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer(string)
    }

    /// ASCII (most provider text) cannot be invalid: decoded directly; anything else is validated.
    private static func string(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
        var high: UInt8 = 0
        for byte in buffer { high |= byte }
        return high < 0x80 ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
    }
}
