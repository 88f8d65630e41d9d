#!/usr/bin/env python3
"""Where a profile's samples go, by thread and by what the thread was doing: writing statements to PostgreSQL,
reading its answers, postgres-nio's bookkeeping, the ledger's code, HTTP, verification, the kernel's sockets, epoll
and futexes. A sample is named by the first activity (in the order below) any frame of its stack belongs to, so a
statement's write is counted as such however deep the socket call under it. scripts/bench/profile-parts.py names the
leaf instead (where the time is spent, not what for).

Usage: perf script -i DATA -F comm,ip,sym,dso | scripts/bench/profile-activities.py
(the symbols are demangled with `swift demangle`, which the toolchain has.)
"""
import collections
import re
import subprocess
import sys

# In order: the first that matches any frame of a sample names it.
ACTIVITIES = [
    ("PostgreSQL: reading and decoding answers", ("PostgresChannelHandler.channelRead", "PostgresChannelHandler.decode",
                                                  "PostgresBackendMessage")),
    ("PostgreSQL: writing statements", ("PostgresChannelHandler.write", "PostgresChannelHandler.flush",
                                        "PostgresConnection.send", "PostgresFrontendMessageEncoder")),
    ("PostgreSQL: postgres-nio otherwise", ("Postgres", "PSQL", "ConnectionStateMachine", "ExtendedQueryStateMachine")),
    ("HTTP", ("HummingbirdCore", "HTTP1", "NIOHTTP", "HTTPServer", "HTTPTypes", "Hummingbird.")),
    ("the ledger", ("Ledger.", "SQLKit", "sqlite3")),
    ("verification", ("CCryptoBoringSSL", "ecp_nistz256", "Crypto.", "X509", "AppStore.")),
    ("kernel: socket writes", ("Socket.write", "sys_write", "writev")),
    ("kernel: socket reads", ("Socket.read", "sys_read")),
    ("kernel: epoll", ("epoll",)),
    ("kernel: futex", ("futex",)),
    ("other async jobs", ("swift_job_run",)),
]
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\(.*\)\s*$")


def samples(lines):
    """(thread, [frame symbol, leaf first]) for each sample of `perf script`."""
    thread, frames = None, []
    for line in lines:
        if not line.strip():
            if frames:
                yield thread, frames
            thread, frames = None, []
        elif line[0] in " \t":
            match = FRAME.match(line)
            if match:
                frames.append(re.sub(r"\+0x[0-9a-f]+$", "", match.group(1)))
        else:
            thread = line.split()[0] if line.split() else "?"
    if frames:
        yield thread, frames


def activity(frames):
    for name, marks in ACTIVITIES:
        if any(mark in frame for frame in frames for mark in marks):
            return name
    return "other"


def main():
    raw = list(samples(sys.stdin))
    if not raw:
        sys.exit("no samples on standard input (perf script -F comm,ip,sym,dso)")
    symbols = sorted({frame for _, frames in raw for frame in frames})
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(symbols), capture_output=True,
                               text=True, check=True).stdout.split("\n")
    names = dict(zip(symbols, demangled))
    by_thread = collections.Counter()
    by_activity = collections.Counter()
    for thread, frames in raw:
        # Threads named for their pool (NIO's loops, the concurrency pool's, SQLite's) without their numbers.
        pool = re.sub(r"[-#]?\d+$", "", thread).rstrip("-#")
        by_thread[pool] += 1
        by_activity[(pool, activity([names.get(frame, frame) for frame in frames]))] += 1
    total = len(raw)
    for pool, count in by_thread.most_common():
        print(f"{100 * count / total:5.1f}%  {pool}")
        for (other, name), n in by_activity.most_common():
            if other == pool:
                print(f"    {100 * n / total:5.1f}%  {name}")
    print(f"{total} samples")


if __name__ == "__main__":
    main()
