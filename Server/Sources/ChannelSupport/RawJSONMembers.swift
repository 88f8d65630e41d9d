@_spi(OrderSafeServer) import OrderSafeModel

/// Finds the exact bytes of each top-level member's value in a JSON object, without re-serialising anything:
/// Alipay signs the `*_response` member's text exactly as it appears in the body, and the fast decoders of
/// provider payloads read members without a general-purpose JSON decoder.
public enum RawJSONMembers {
    public enum Error: Swift.Error, Equatable {
        case notAnObject
        case malformed(offset: Int)
        case tooDeep
        /// More members in one object than `maxMembers`: no provider payload comes near it.
        case tooManyMembers
    }

    /// The most members one object may have (Apple's largest payload has about forty).
    public static let maxMembers = 1024

    /// Top-level member names to the raw bytes of their values (strings keep their quotes and escapes).
    public static func extract(_ bytes: [UInt8], maxDepth: Int = 64) throws(Error) -> [String: ArraySlice<UInt8>] {
        var members: [String: ArraySlice<UInt8>] = [:]
        for member in try scan(bytes, in: 0..<bytes.count, maxDepth: maxDepth) {
            guard let name = UTF8Text.string(bytes[member.name]) else {
                throw .malformed(offset: member.name.lowerBound)
            }
            members[name] = bytes[member.value]
        }
        return members
    }

    /// The members of the object that spans exactly `range` of `bytes`: each name's range (inside its quotes,
    /// escapes untouched) and its value's range, in document order.
    public static func scan(_ bytes: [UInt8], in range: Range<Int>, maxDepth: Int = 64) throws(Error)
        -> [(name: Range<Int>, value: Range<Int>)]
    {
        var scanner = Scanner(bytes: bytes, maxDepth: maxDepth, index: range.lowerBound, end: range.upperBound)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { throw .notAnObject }
        scanner.index += 1
        var members: [(name: Range<Int>, value: Range<Int>)] = []
        members.reserveCapacity(16)
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "}") {
            scanner.index += 1
            scanner.skipWhitespace()
            guard scanner.index == scanner.end else { throw .malformed(offset: scanner.index) }
            return members
        }
        while true {
            scanner.skipWhitespace()
            let nameRange = try scanner.skipString()
            scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipWhitespace()
            let start = scanner.index
            try scanner.skipValue(depth: 1)
            guard members.count < maxMembers else { throw .tooManyMembers }
            members.append((nameRange.lowerBound + 1..<nameRange.upperBound - 1, start..<scanner.index))
            scanner.skipWhitespace()
            switch scanner.peek() {
            case UInt8(ascii: ","): scanner.index += 1
            case UInt8(ascii: "}"):
                scanner.index += 1
                scanner.skipWhitespace()
                guard scanner.index == scanner.end else { throw .malformed(offset: scanner.index) }
                return members
            default: throw .malformed(offset: scanner.index)
            }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        let maxDepth: Int
        var index: Int
        let end: Int

        func peek() -> UInt8? { index < end ? bytes[index] : nil }

        static func isNumberByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                true
            default: false
            }
        }

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
            while true {
                // To the next quote, backslash or control character, sixteen bytes at a time.
                index = bytes.withUnsafeBufferPointer { [index, end] in
                    ByteScan.firstJSONSpecial(in: UnsafeBufferPointer(rebasing: $0[..<min(end, $0.count)]), from: index)
                }
                guard let byte = peek() else { break }
                index += 1
                if byte == UInt8(ascii: "\\") {
                    guard peek() != nil else { break }
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    return start..<index
                } else {
                    throw .malformed(offset: index - 1)  // a control character
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
                if peek() == close {
                    index += 1
                    return
                }
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
                    if peek() == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(close)
                    return
                }
            case .some(let byte)
            where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
                while let next = peek(), Self.isNumberByte(next) { index += 1 }
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                for literal in ["true", "false", "null"] where bytes[index..<end].starts(with: literal.utf8) {
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
