/// Finds the exact bytes of each top-level member's value in a JSON object, without re-serialising anything:
/// Alipay signs the `*_response` member's text exactly as it appears in the body, and the fast decoders of
/// provider payloads read members without a general-purpose JSON decoder.
public enum RawJSONMembers {
    public enum Error: Swift.Error, Equatable {
        case notAnObject
        case malformed(offset: Int)
        case tooDeep
    }

    /// Top-level member names to the raw bytes of their values (strings keep their quotes and escapes).
    public static func extract(_ bytes: [UInt8], maxDepth: Int = 64) throws(Error) -> [String: ArraySlice<UInt8>] {
        var scanner = Scanner(bytes: bytes, maxDepth: maxDepth)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { throw .notAnObject }
        scanner.index += 1
        var members: [String: ArraySlice<UInt8>] = [:]
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "}") { return members }
        while true {
            scanner.skipWhitespace()
            let nameRange = try scanner.skipString()
            guard let name = String(validating: bytes[nameRange].dropFirst().dropLast(), as: UTF8.self) else {
                throw .malformed(offset: nameRange.lowerBound)
            }
            scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipWhitespace()
            let start = scanner.index
            try scanner.skipValue(depth: 1)
            members[name] = bytes[start..<scanner.index]
            scanner.skipWhitespace()
            switch scanner.peek() {
            case UInt8(ascii: ","): scanner.index += 1
            case UInt8(ascii: "}"):
                scanner.index += 1
                scanner.skipWhitespace()
                guard scanner.index == bytes.count else { throw .malformed(offset: scanner.index) }
                return members
            default: throw .malformed(offset: scanner.index)
            }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        let maxDepth: Int
        var index = 0

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Error) {
            guard peek() == byte else { throw .malformed(offset: index) }
            index += 1
        }

        /// Skips a string, honouring backslash escapes; returns its range including the quotes.
        mutating func skipString() throws(Error) -> Range<Int> {
            let start = index
            try expect(UInt8(ascii: "\""))
            while let byte = peek() {
                index += 1
                if byte == UInt8(ascii: "\\") {
                    guard peek() != nil else { break }
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    return start..<index
                } else if byte < 0x20 {
                    throw .malformed(offset: index - 1)
                }
            }
            throw .malformed(offset: start)
        }

        mutating func skipValue(depth: Int) throws(Error) {
            guard depth <= maxDepth else { throw .tooDeep }
            switch peek() {
            case UInt8(ascii: "\""):
                _ = try skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = peek() == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let isObject = close == UInt8(ascii: "}")
                index += 1
                skipWhitespace()
                if peek() == close { index += 1; return }
                while true {
                    skipWhitespace()
                    if isObject {
                        _ = try skipString()
                        skipWhitespace()
                        try expect(UInt8(ascii: ":"))
                        skipWhitespace()
                    }
                    try skipValue(depth: depth + 1)
                    skipWhitespace()
                    if peek() == UInt8(ascii: ",") { index += 1; continue }
                    try expect(close)
                    return
                }
            case .some(let byte) where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
                while let next = peek(), "0123456789+-.eE".utf8.contains(next) { index += 1 }
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                for literal in ["true", "false", "null"] where bytes[index...].starts(with: literal.utf8) {
                    index += literal.utf8.count
                    return
                }
                throw .malformed(offset: index)
            default:
                throw .malformed(offset: index)
            }
        }
    }
}
