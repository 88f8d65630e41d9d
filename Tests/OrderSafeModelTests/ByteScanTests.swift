@_spi(OrderSafeServer) import OrderSafeModel
import Testing

/// `ByteScan` answers what a byte-by-byte loop answers: its sixteen-bytes-at-a-time test must never pass over a byte it
/// should stop at, whatever the byte's value, where it sits in a vector, what surrounds it or where the search starts.
@Suite("ByteScan: searches sixteen bytes at a time, answered as byte by byte")
struct ByteScanTests {
    /// The reference: the first byte at or after `start` below 0x20, a quote, a backslash or `extra`.
    static func firstSpecial(_ bytes: [UInt8], from start: Int, also extra: UInt8) -> Int {
        var index = max(0, start)
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == extra { return index }
            index += 1
        }
        return bytes.count
    }

    static func scanned(_ bytes: [UInt8], from start: Int, also extra: UInt8) -> Int {
        bytes.withUnsafeBufferPointer { ByteScan.firstJSONSpecial(in: $0, from: start, also: extra) }
    }

    @Test(
        "every byte value at every place of runs up to a vector and a half and of two and three vectors, among ordinary, high and boundary bytes, from every start"
    )
    func everyByteEverywhere() {
        // 0x21 and 0x7F sit beside the bounds the test compares with; 0xFF sets every high bit; 0x5B and 0x5D beside
        // the backslash, 0x2E and 0x30 beside the slash.
        let fillers: [UInt8] = [UInt8(ascii: "A"), 0x21, 0x7F, 0xFF, 0x5B, 0x2E]
        var mismatches = 0
        for extra in [UInt8(ascii: "\""), UInt8(ascii: "/")] {
            for filler in fillers {
                for length in Array(1...24) + [31, 32, 33, 47, 48] {
                    for place in 0..<length {
                        for value in 0...255 {
                            var bytes = [UInt8](repeating: filler, count: length)
                            bytes[place] = UInt8(value)
                            for start in [0, 1, place, place + 1, length] where start <= length {
                                if Self.scanned(bytes, from: start, also: extra)
                                    != Self.firstSpecial(bytes, from: start, also: extra)
                                {
                                    mismatches += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(mismatches == 0)
    }

    @Test("the first of two stops is found, empty and out-of-range starts answer the end")
    func firstOfTwoAndBounds() {
        var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 40)
        bytes[29] = UInt8(ascii: "\\")
        bytes[13] = UInt8(ascii: "\"")
        #expect(Self.scanned(bytes, from: 0, also: UInt8(ascii: "/")) == 13)
        #expect(Self.scanned(bytes, from: 14, also: UInt8(ascii: "/")) == 29)
        bytes[5] = UInt8(ascii: "/")
        #expect(Self.scanned(bytes, from: 0, also: UInt8(ascii: "/")) == 5)
        #expect(Self.scanned(bytes, from: 0, also: UInt8(ascii: "\"")) == 13)
        #expect(Self.scanned(bytes, from: 40, also: UInt8(ascii: "/")) == 40)
        #expect(Self.scanned(bytes, from: 99, also: UInt8(ascii: "/")) == 40)
        #expect(Self.scanned([], from: 0, also: UInt8(ascii: "/")) == 0)
    }

    @Test("firstIndex(of:in:) answers the slice's own indices; equal compares every byte and the counts")
    func sliceIndicesAndEquality() {
        let bytes = Array("ab.cd.ef".utf8)
        #expect(ByteScan.firstIndex(of: UInt8(ascii: "."), in: bytes[...]) == 2)
        #expect(ByteScan.firstIndex(of: UInt8(ascii: "."), in: bytes[3...]) == 5)
        #expect(ByteScan.firstIndex(of: UInt8(ascii: "."), in: bytes[6...]) == nil)
        #expect(ByteScan.firstIndex(of: UInt8(ascii: "."), in: bytes[8...]) == nil)
        let long = [UInt8](repeating: 7, count: 3_000)
        var other = long
        #expect(ByteScan.equal(long[...], other[...]))
        other[2_999] = 8
        #expect(!ByteScan.equal(long[...], other[...]))
        #expect(!ByteScan.equal(long[...], long.dropLast()))
        #expect(ByteScan.equal(bytes[3..<5], Array("cd".utf8)[...]))
        #expect(ByteScan.equal(bytes[3..<3], [][...]))
    }
}
