/// The writes of one file that follow each other (each starts where the last ended), kept in memory and handed on in
/// writes of at most ``largestWrite`` bytes when a write does not follow, when they would pass ``limit`` bytes, or
/// when the file is synced, read, sized, truncated or closed (``handOn(_:)``).
///
/// SQLite writes each frame of the write-ahead log as two `pwrite`s (its 24-byte header, then the page): 22 calls a
/// fresh submission, each of them the kernel's full path of a write (the file's lock, its times, the page cache) —
/// half of the write path's samples were the kernel's (docs/benchmarks.md). Gathered, a commit's frames are a few.
struct GatheredLogWrites: ~Copyable {
    /// The most bytes kept before they are handed on.
    let limit: Int
    /// The most bytes handed on in one write: SQLite's unix VFS writes at most 128 KiB − 1 a call (`seekAndWrite`
    /// masks the amount with `0x1ffff`) and answers a longer one as a full disk.
    let largestWrite: Int
    private var bytes: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Where the kept bytes start in the file, and how many there are.
    private var start: Int64 = 0
    private var count = 0

    init(limit: Int = 4 << 20, largestWrite: Int = 64 << 10) {
        self.limit = limit
        self.largestWrite = largestWrite
    }

    deinit { bytes?.deallocate() }

    /// Keeps `amount` bytes at `source` to be written at `offset`, handing on what is kept first when they do not
    /// follow it or would pass ``limit``; more than ``limit`` bytes at once go straight through `write` (SQLite writes
    /// a page and a frame's header at a time).
    /// - Returns: `write`'s first non-zero answer (an SQLite error code), or 0.
    mutating func write(
        _ source: UnsafeRawPointer, amount: Int, at offset: Int64,
        through write: (UnsafeRawPointer, Int, Int64) -> Int32
    ) -> Int32 {
        if count > 0, start + Int64(count) != offset || count + amount > limit {
            let status = handOn(write)
            guard status == 0 else { return status }
        }
        guard amount <= limit else { return write(source, amount, offset) }
        if count == 0 { start = offset }
        if count + amount > capacity {
            let grown = min(limit, max(64 << 10, capacity * 2, count + amount))
            let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            if let bytes {
                larger.copyMemory(from: bytes, byteCount: count)
                bytes.deallocate()
            }
            (bytes, capacity) = (larger, grown)
        }
        (bytes! + count).copyMemory(from: source, byteCount: amount)
        count += amount
        return 0
    }

    /// Writes what is kept through `write` and forgets it, written or not: a failed write is SQLite's error to
    /// answer (the commit that syncs it fails), not one to try again behind its back.
    mutating func handOn(_ write: (UnsafeRawPointer, Int, Int64) -> Int32) -> Int32 {
        guard count > 0, let bytes else { return 0 }
        defer { count = 0 }
        var written = 0
        while written < count {
            let amount = min(largestWrite, count - written)
            let status = write(bytes + written, amount, start + Int64(written))
            guard status == 0 else { return status }
            written += amount
        }
        return 0
    }
}
