import Foundation

/// Searches and comparisons over bytes done by the C library or eight bytes at a time, for the hot paths that walk a
/// submission's kilobytes (a signed transaction is ~4 KiB): a byte-by-byte loop with an early exit is never
/// vectorised: finding a JSON string's end in a 3.9 KiB transaction took 2.1 µs that way, 0.68 µs here, and comparing
/// its 3 KiB header 1.3 µs with `Array`'s `==`, 36 ns here (`ordersafe-bench bytes`).
@_spi(OrderSafeServer) public enum ByteScan {
    /// The index of the first `byte` in `bytes`, or nil (`memchr`).
    @_spi(OrderSafeServer) public static func firstIndex(of byte: UInt8, in bytes: ArraySlice<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, let found = memchr(base, Int32(byte), buffer.count) else {
                return nil
            }
            return bytes.startIndex + (UnsafeRawPointer(found) - UnsafeRawPointer(base))
        }
    }

    /// Whether `a` and `b` hold the same bytes (`memcmp`).
    @_spi(OrderSafeServer) public static func equal(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        b.withUnsafeBufferPointer { equal(a, $0) }
    }

    /// Whether `a` and `b` hold the same bytes (`memcmp`).
    @_spi(OrderSafeServer) public static func equal(_ a: ArraySlice<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { a in
            guard let first = a.baseAddress, let second = b.baseAddress else { return true }  // both empty
            return memcmp(first, second, a.count) == 0
        }
    }

    /// The index of the first byte at or after `start` that a JSON string cannot hold as it is — a control character
    /// (below 0x20), a quote or a backslash — or that is `also`; `buffer.count` when there is none.
    @_spi(OrderSafeServer) public static func firstJSONSpecial(
        in buffer: UnsafeBufferPointer<UInt8>, from start: Int, also extra: UInt8 = UInt8(ascii: "\"")
    ) -> Int {
        let count = buffer.count
        guard let base = buffer.baseAddress, start < count else { return count }
        var index = max(0, start)
        while count - index >= 8 {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            if anyByte(of: word, below: 0x20) || anyByte(of: word, equalTo: 0x22)
                || anyByte(of: word, equalTo: 0x5C) || anyByte(of: word, equalTo: extra)
            {
                break  // somewhere in these eight: looked at byte by byte below
            }
            index += 8
        }
        while index < count {
            let byte = base[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == extra { return index }
            index += 1
        }
        return count
    }

    /// Whether a byte of `word` is below `bound` (at most 0x80): (word − bound·ones) & ~word has a byte's high bit set
    /// exactly when one is (a borrow reaches only bytes above one that is below `bound`; exact as to whether, not
    /// as to which).
    @inline(__always)
    private static func anyByte(of word: UInt64, below bound: UInt8) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        return (word &- UInt64(bound) &* ones) & ~word & (ones << 7) != 0
    }

    /// Whether a byte of `word` is `byte`: a byte of `word ^ byte·ones` is below 1.
    @inline(__always)
    private static func anyByte(of word: UInt64, equalTo byte: UInt8) -> Bool {
        anyByte(of: word ^ UInt64(byte) &* 0x0101_0101_0101_0101, below: 1)
    }
}
