#!/usr/bin/env python3
"""Where a profile's samples go, by part: the kernel's by system call (the database's files, the sockets, futexes,
epoll) or scheduling, BoringSSL, SQLite, the Swift runtime and its libraries, the C library, the server's own modules,
NIO and Hummingbird, the database drivers. Reads `perf script -F comm,ip,sym,dso` on standard input (a sample is a
header line and its stack, leaf first) and prints each part's share of the samples, leaf (self) samples only.

Usage: perf script -i DATA -F comm,ip,sym,dso | scripts/bench/profile-parts.py [SUBMISSIONS_PER_S SECONDS]
With the rate and the seconds sampled (at 999 Hz), each part is also given in ms of CPU per submission.
"""
import collections
import re
import sys

OURS = {"Ledger", "Engine", "OrderSafeServer", "OrderSafeModel", "ChannelSupport", "AppStore", "Alipay", "WeChatPay",
        "Sandbox", "ordersafe"}
# BoringSSL's and the Swift runtime's functions by name, where a binary holds them (scripts/build-release): the
# runtime's internal C++ functions (metadata caches, casts, tasks' status records, tuples' value witnesses) have no
# `swift` in their names; counted as the binary's other C code, they were 1.6% of a fresh submission's samples (and
# jemalloc's, a library of its own, 2.2% of a PostgreSQL replica's).
BORINGSSL = ("CCryptoBoringSSL", "ecp_nistz256", "__ecp_nistz256", "sha256_", "beeu_", "digest_to_scalar", "ecdsa_",
             "ec_GFp", "bn_")
SWIFT_RUNTIME = ("swift_", "_swift", "__swift", "swift::", "_dispatch", "dispatch_", "_Block_", "getCache", "tryCast",
                 "withStatusRecordLock", "tuple_", "jobInvoke", "completeTask", "destroyTask", "(anonymous namespace)::",
                 "_destroyErrorObject", "objectdestroy", "_foundation_", "performOnMetadataCache", "dispatchEnqueue")
DRIVERS = {"SQLiteNIO", "SQLiteKit", "SQLKit", "PostgresNIO", "PostgresKit", "AsyncKit"}
SWIFT_LIBRARIES = ("libswift", "libFoundation", "libdispatch", "libBlocksRuntime")
# Kernel entry points, looked for in a kernel sample's stack: the first found names the sample's system call.
SYSCALLS = [
    ("kernel: the database's files (pwrite, pread, fsync)", ("sys_pwrite64", "sys_pread64", "sys_fsync", "sys_fdatasync")),
    ("kernel: sockets (read, write)", ("sys_write", "sys_writev", "sys_read", "sys_readv", "sys_sendmsg", "sys_recvmsg",
                                       "sys_sendto", "sys_recvfrom")),
    ("kernel: futex (threads waking each other)", ("sys_futex",)),
    ("kernel: epoll", ("sys_epoll_wait", "sys_epoll_ctl")),
]
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def swift_module(symbol):
    """The module of a mangled Swift symbol (`$s6Ledger…` is Ledger), or None."""
    match = re.match(r"\$s(\d+)", symbol)
    if not match:
        return None
    length = int(match.group(1))
    start = match.end()
    return symbol[start:start + length]


def part(frames):
    symbol, dso = frames[0]
    if dso.startswith("[kernel"):
        for name, calls in SYSCALLS:
            if any(any(call in frame for call in calls) for frame, _ in frames):
                return name
        return "kernel: scheduling, interrupts, other"
    if any(library in dso for library in SWIFT_LIBRARIES):
        return "Swift runtime and standard libraries"
    if "libc.so" in dso or "libjemalloc" in dso or "ld-linux" in dso or "[vdso]" in dso or symbol.endswith("@plt"):
        return "C library (malloc, memmove, locks)"
    if symbol == "[unknown]":
        return "unknown (no symbol)"
    module = swift_module(symbol)
    if module is None and symbol.startswith("$s"):
        return "Swift runtime and standard libraries"  # the standard library's generics, specialised in the binary
    if module is None:
        if symbol.startswith(BORINGSSL):
            return "BoringSSL (P-256, SHA-256)"
        # In a binary linked with the Swift libraries (scripts/build-release) the runtime's C and C++ code, libdispatch's
        # and the blocks runtime's are the binary's own, some of it under names of its own (`getCache`, `tryCast`).
        if symbol.startswith(SWIFT_RUNTIME):
            return "Swift runtime and standard libraries"
        if symbol.startswith(("c_nio", "CNIO")):
            return "NIO and Hummingbird"
        return "SQLite (the binary's other C code)"
    if module in OURS:
        return "OrderSafe's modules: " + module
    if module.startswith(("NIO", "Hummingbird", "HTTPTypes", "_NIO")):
        return "NIO and Hummingbird"
    if module in DRIVERS:
        return "database drivers"
    if module in ("Crypto", "_CryptoExtras", "X509", "SwiftASN1"):
        return "swift-crypto, swift-certificates"
    if module in ("Foundation", "FoundationEssentials", "FoundationInternationalization", "Synchronization",
                  "_Concurrency", "Dispatch"):
        return "Swift runtime and standard libraries"
    return "other packages (swift-log, swift-metrics, …)"


def samples(lines):
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        match = FRAME.match(line)
        if match:
            frames.append((match.group(1), match.group(2)))
    if frames:
        yield frames


def main():
    counts = collections.Counter(part(frames) for frames in samples(sys.stdin))
    total = sum(counts.values())
    if total == 0:
        sys.exit("no samples on standard input (perf script -F comm,ip,sym,dso)")
    per_submission = None
    if len(sys.argv) == 3:
        per_submission = 1000 / 999 / (float(sys.argv[1]) * float(sys.argv[2]))
    for name, count in counts.most_common():
        share = f"{100 * count / total:5.1f}%"
        cost = f"  {count * per_submission:.4f} ms a submission" if per_submission else ""
        print(f"{share}  {name}{cost}")
    print(f"{total} samples")


if __name__ == "__main__":
    main()
