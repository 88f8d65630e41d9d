/// A minimal ASN.1 reader for the hot path of receipt parsing: tag, length and value slices, without building a
/// node tree. Definite lengths are read directly; an indefinite length (BER) is reported so the caller can
/// descend into it (the receipt container uses them) but never skip over one.
struct TLVReader {
    struct Element {
        var tag: UInt8
        /// The value; for an indefinite length, everything after the header (the caller descends into it).
        var value: ArraySlice<UInt8>
        var isIndefinite: Bool
        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    enum Failure: Error { case malformed }

    private(set) var rest: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        rest = bytes
    }

    var isAtEnd: Bool { rest.isEmpty || rest.starts(with: [0, 0]) }

    /// The next element, consumed when its length is definite.
    mutating func next() throws(Failure) -> Element {
        guard rest.count >= 2 else { throw .malformed }
        let tag = rest[rest.startIndex]
        guard tag & 0x1F != 0x1F else { throw .malformed }  // high tag numbers never occur in receipts
        var index = rest.startIndex + 1
        let first = rest[index]
        index += 1
        if first == 0x80 {
            guard tag & 0x20 != 0 else { throw .malformed }
            let value = rest[index...]
            rest = rest[rest.endIndex...]
            return Element(tag: tag, value: value, isIndefinite: true)
        }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4, index + count <= rest.endIndex else { throw .malformed }
            for byte in rest[index..<index + count] { length = length << 8 | Int(byte) }
            index += count
        }
        guard length <= rest.endIndex - index else { throw .malformed }
        let value = rest[index..<index + length]
        rest = rest[(index + length)...]
        return Element(tag: tag, value: value, isIndefinite: false)
    }
}
