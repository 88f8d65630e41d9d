#if os(Linux)
import CMalloc
#endif

/// How much freed memory the C allocator keeps before giving it back to the kernel.
///
/// glibc gives back the free top of a thread's heap as soon as 128 KiB of it are free: under load that is an
/// `madvise` every few requests, and each one interrupts every core to flush its TLB (4.5% of the server's samples in
/// `scripts/bench/load-profile`). Keeping up to 64 MiB per heap gave 1,415–1,432 fresh submissions/s against 1,126 (the
/// same binary with `GLIBC_TUNABLES=glibc.malloc.trim_threshold=67108864`, SQLite, 16 connections); peak RSS stays
/// within `scripts/bench/load-test`'s bound.
enum FreedMemory {
    static let keptPerHeap: Int32 = 64 << 20

    /// Sets the threshold; call once, before the server starts.
    static func keepBeforeReturning() {
        #if os(Linux)
        _ = mallopt(M_TRIM_THRESHOLD, keptPerHeap)
        #endif
    }
}
