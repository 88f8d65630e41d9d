"""Pages a SQLite log's commits wrote, per b-tree and per order added (scripts/bench/wal-pages).

Reads DATABASE-wal as SQLite's format describes it (https://www.sqlite.org/fileformat2.html#walformat: a 32-byte
header, then frames of a 24-byte header and a page; a frame whose "database size" is not zero ends a commit; frames
whose salts differ from the header's are left from before the log restarted), names each page by the b-tree dbstat
says it belongs to, and counts the orders each commit added by the largest rowid among the orders table's leaf pages
it wrote. The first commit of each log is its baseline; the rest are counted, summed over the logs given.
Usage: python3 wal-pages.py DATABASE...   (DATABASE-wal beside each; the database is opened, so the log is applied)
"""

import collections
import sqlite3
import struct
import sys


def varint(data, at):
    value = 0
    for index in range(9):
        byte = data[at + index]
        if index == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + index + 1
    raise ValueError("varint")


def largest_rowid(page, page_number):
    """The largest rowid on a table b-tree leaf page, or None for any other page."""
    start = 100 if page_number == 1 else 0
    if page[start] != 0x0D:
        return None
    cells = struct.unpack(">H", page[start + 3 : start + 5])[0]
    largest = None
    for cell in range(cells):
        offset = struct.unpack(">H", page[start + 8 + 2 * cell : start + 10 + 2 * cell])[0]
        _, after = varint(page, offset)
        rowid, _ = varint(page, after)
        largest = rowid if largest is None else max(largest, rowid)
    return largest


def commits(log):
    _, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">8I", log[:32])
    current, offset = [], 32
    while offset + 24 + page_size <= len(log):
        number, size_after, frame_salt1, frame_salt2 = struct.unpack(">4I", log[offset : offset + 16])
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            break
        current.append((number, log[offset + 24 : offset + 24 + page_size]))
        if size_after:
            yield current
            current = []
        offset += 24 + page_size


def count_log(path, per_tree):
    """Counts one log's commits into `per_tree`: (commits, pages, orders added)."""
    with open(path + "-wal", "rb") as file:
        log = file.read()
    database = sqlite3.connect(path)
    owner = dict(database.execute("SELECT pageno, name FROM dbstat"))
    order_pages = {number for number, name in owner.items() if name == "orders"}
    pages = commit_count = 0
    baseline = latest = None
    for frames in commits(log):
        rowids = [largest_rowid(page, number) for number, page in frames if number in order_pages]
        largest = max((rowid for rowid in rowids if rowid is not None), default=None)
        if baseline is None:
            baseline = latest = largest
            continue
        commit_count += 1
        distinct = {number for number, _ in frames}
        pages += len(distinct)
        for number in distinct:
            per_tree[owner.get(number, "(new page)")] += 1
        if largest is not None:
            latest = max(latest, largest)
    return commit_count, pages, (latest or 0) - (baseline or 0)


def main(paths):
    per_tree = collections.Counter()
    commits_counted = pages = added = 0
    for path in paths:
        counted = count_log(path, per_tree)
        commits_counted, pages, added = commits_counted + counted[0], pages + counted[1], added + counted[2]
    if commits_counted == 0 or added <= 0:
        sys.exit("no complete commit that added orders in the log: run longer before the kill")
    print(f"{commits_counted} commits, {added} orders, {added / commits_counted:.1f} orders a commit, "
          f"{pages / added:.2f} pages an order")
    for name, written in per_tree.most_common():
        print(f"  {name:42s} {written / added:6.2f}")


main(sys.argv[1:])
