/// A decoded form body as UTF-8 byte pairs sorted by name, unique by name: the sign content is built straight from
/// them, and Strings are made only for the fields that are read.
public struct FormFields: Sendable {
    /// A field: where its decoded name and value lie in `storage`.
    struct Pair: Sendable {
        var name: Range<Int>
        var value: Range<Int>
    }

    /// Every decoded name and value, back to back: one allocation for the whole body.
    let storage: [UInt8]
    let pairs: [Pair]

    /// Parses `a=1&b=x+y%20z` (`+` is a space), refusing duplicates, bad escapes and non-UTF-8.
    public init(parsing body: [UInt8], maxBytes: Int = 64 * 1024, maxFields: Int = 128) throws(FormEncoding.Error) {
        guard body.count <= maxBytes else { throw .tooLarge(limit: maxBytes) }
        var pairs: [Pair] = []
        pairs.reserveCapacity(32)
        var failure: FormEncoding.Error?
        // One pass decodes every name and value into one buffer (decoded text is never longer than its encoding).
        let storage = [UInt8](unsafeUninitializedCapacity: body.count) { output, count in
            body.withUnsafeBufferPointer { input in
                var o = 0
                var i = 0
                var fieldStart = 0
                var nameStart = 0
                var valueStart = -1
                var ascii = true
                func name(_ range: Range<Int>) -> String {
                    String(decoding: UnsafeBufferPointer(rebasing: output[range]), as: UTF8.self)
                }
                while i <= input.count {
                    let byte = i == input.count ? UInt8(ascii: "&") : input[i]
                    switch byte {
                    case UInt8(ascii: "&"):
                        if i > fieldStart {
                            guard valueStart > nameStart else {
                                failure = .malformedPair(
                                    String(
                                        decoding: UnsafeBufferPointer(rebasing: input[fieldStart..<i]), as: UTF8.self))
                                break
                            }
                            guard pairs.count < maxFields else {
                                failure = .tooManyFields(limit: maxFields)
                                break
                            }
                            let pair = Pair(name: nameStart..<valueStart, value: valueStart..<o)
                            if !ascii {
                                for range in [pair.name, pair.value]
                                where String(validating: UnsafeBufferPointer(rebasing: output[range]), as: UTF8.self)
                                    == nil
                                {
                                    failure = .notUTF8(field: range == pair.name ? "?" : name(pair.name))
                                }
                            }
                            pairs.append(pair)
                        }
                        fieldStart = i + 1
                        nameStart = o
                        valueStart = -1
                        ascii = true
                    case UInt8(ascii: "=") where valueStart < 0:
                        valueStart = o
                    case UInt8(ascii: "+"):
                        output[o] = UInt8(ascii: " ")
                        o += 1
                    case UInt8(ascii: "%"):
                        guard i + 2 < input.count, let high = Self.hexValue(input[i + 1]),
                            let low = Self.hexValue(input[i + 2])
                        else {
                            failure = .badPercentEncoding(field: valueStart < 0 ? "?" : name(nameStart..<valueStart))
                            break
                        }
                        output[o] = high << 4 | low
                        ascii = ascii && output[o] < 0x80
                        o += 1
                        i += 2
                    default:
                        output[o] = byte
                        ascii = ascii && byte < 0x80
                        o += 1
                    }
                    if failure != nil { break }
                    i += 1
                }
                count = o
            }
        }
        if let failure { throw failure }
        pairs.sort { storage[$0.name].lexicographicallyPrecedes(storage[$1.name]) }
        for index in pairs.indices.dropFirst() where storage[pairs[index].name] == storage[pairs[index - 1].name] {
            throw .duplicateField(String(decoding: storage[pairs[index].name], as: UTF8.self))
        }
        self.storage = storage
        self.pairs = pairs
    }

    /// The field's value, if present.
    public subscript(name: String) -> String? {
        let key = Array(name.utf8)
        var low = 0
        var high = pairs.count
        while low < high {
            let middle = (low + high) / 2
            if storage[pairs[middle].name].lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        guard low < pairs.count, storage[pairs[low].name].elementsEqual(key) else { return nil }
        return String(decoding: storage[pairs[low].value], as: UTF8.self)
    }

    /// Every field as a dictionary.
    public var dictionary: [String: String] {
        Dictionary(
            uniqueKeysWithValues: pairs.map {
                (String(decoding: storage[$0.name], as: UTF8.self), String(decoding: storage[$0.value], as: UTF8.self))
            })
    }

    /// Alipay's sign content: non-empty fields other than `excluding`, `name=value` joined by `&`, in name order.
    public func signContent(excluding: Set<String>) -> [UInt8] {
        let excluded = excluding.map { Array($0.utf8) }
        var content: [UInt8] = []
        content.reserveCapacity(storage.count + 2 * pairs.count)
        for pair in pairs
        where !pair.value.isEmpty && !excluded.contains(where: { storage[pair.name].elementsEqual($0) }) {
            if !content.isEmpty { content.append(UInt8(ascii: "&")) }
            content.append(contentsOf: storage[pair.name])
            content.append(UInt8(ascii: "="))
            content.append(contentsOf: storage[pair.value])
        }
        return content
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
