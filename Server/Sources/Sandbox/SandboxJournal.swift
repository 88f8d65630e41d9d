import Foundation

/// What a simulator did, kept in its data folder as JSON lines and read back when it starts again on that folder: a
/// provider does not forget a payment, a queued transaction or an unacknowledged notification because the merchant's
/// server (which runs the built-in simulators) was killed.
///
/// Each record is appended with one `write` before the simulator answers whoever caused it, so a process killed at any
/// moment leaves every record it answered for (the kernel keeps a killed process's writes; a power loss is not
/// simulated). The file is read strictly: a line that is not a record is an error naming its line, except a last line
/// cut short by a kill, which is dropped.
///
/// Records that later ones supersede (a trade's earlier states, notifications since acknowledged) are dropped by
/// ``compact(_:)``: the simulator writes what it holds now to a new file that replaces the old one in one rename, so a
/// kill at any moment leaves one whole journal or the other. Its owner compacts on start and whenever the file has
/// grown past twice its last compacted size (``wantsCompaction``), so the file follows what the simulator holds, not
/// every call it ever answered.
///
/// A simulator whose record is history (the App Store's: every transaction and notification is what Apple answers
/// from, for ever) keeps none of it in memory: it streams the file once at start (``open(_:maxBytes:each:)``, a
/// piece at a time) into an index of where each record's line is (``Ref``), and reads a line back when it answers
/// (``read(_:)``).
final class SandboxJournal<Record: Codable> {
    /// Where a record's line is: its byte offset in the file (its position, in memory) and its length.
    struct Ref: Hashable, Sendable {
        var offset: Int64
        var length: Int32
    }

    /// The largest journal read back, and the longest record.
    static var maxBytes: Int { 512 * 1024 * 1024 }
    static var maxLineBytes: Int { 1024 * 1024 }
    /// Growth below this never asks for a compaction.
    static var compactionFloor: Int { 1024 * 1024 }

    private var handle: FileHandle?
    private let file: URL?
    /// The file's size now, and right after it was last compacted (or read).
    private var size: Int
    private var compactedSize: Int
    /// The lines of a journal without a file that its owner reads back (``inMemoryLines``).
    private var lines: [Data]?

    /// No file: nothing is kept (a simulator in a test process).
    static var inMemory: SandboxJournal { SandboxJournal(handle: nil, file: nil, size: 0) }

    /// No file, the lines kept in memory for ``read(_:)`` (a simulator in a test process that reads its records back).
    static var inMemoryLines: SandboxJournal {
        let journal = SandboxJournal(handle: nil, file: nil, size: 0)
        journal.lines = []
        return journal
    }

    private init(handle: FileHandle?, file: URL?, size: Int) {
        self.handle = handle
        self.file = file
        self.size = size
        compactedSize = size
    }

    /// Whether the file has grown enough since it was last compacted to be worth compacting now.
    var wantsCompaction: Bool { handle != nil && size > max(Self.compactionFloor, 2 * compactedSize) }

    /// Opens `file` for appending (created when missing) and returns the records it holds, oldest first.
    static func open(_ file: URL) throws -> (journal: SandboxJournal, records: [Record]) {
        var records: [Record] = []
        let journal = try open(file, maxBytes: maxBytes) { record, _ in records.append(record) }
        return (journal, records)
    }

    /// Opens `file` for appending (created when missing) and hands each record it holds to `each`, oldest first, with
    /// where its line is; the file is read a piece at a time, never whole, and refused past `maxBytes`.
    static func open(_ file: URL, maxBytes: Int, each: (Record, Ref) throws -> Void) throws -> SandboxJournal {
        let decoder = JSONDecoder()
        return try open(
            file, maxBytes: maxBytes, reading: { try decoder.decode(Record.self, from: Data($0)) }, each: each)
    }

    /// ``open(_:maxBytes:each:)``, each line read by `reading` into a `View`: what of a record its owner keeps in
    /// memory (read without building the rest).
    static func open<View>(
        _ file: URL, maxBytes: Int, reading: ([UInt8]) throws -> View, each: (View, Ref) throws -> Void
    ) throws -> SandboxJournal {
        if !FileManager.default.fileExists(atPath: file.path) {
            guard
                FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
            else {
                throw SandboxJournalError(file: file, detail: "cannot be created")
            }
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forUpdating: file)
            let size = try handle.seekToEnd()
            guard size <= UInt64(maxBytes) else {
                throw SandboxJournalError(file: file, detail: "is larger than \(maxBytes) bytes")
            }
            try handle.seek(toOffset: 0)
        } catch let error as SandboxJournalError {
            throw error
        } catch {
            throw SandboxJournalError(file: file, detail: "cannot be read: \(error)")
        }
        var pending: [UInt8] = []
        var pendingOffset: Int64 = 0  // the file offset of pending's first byte
        var line = 1
        var total: Int64 = 0
        while true {
            let piece: Data
            do {
                piece = try handle.read(upToCount: 1 << 20) ?? Data()
            } catch {
                throw SandboxJournalError(file: file, detail: "cannot be read: \(error)")
            }
            if piece.isEmpty { break }
            total += Int64(piece.count)
            pending.append(contentsOf: piece)
            var start = 0
            while let end = Self.lineFeed(in: pending, from: start) {
                guard end - start <= maxLineBytes else {
                    throw SandboxJournalError(file: file, detail: "line \(line) is longer than \(maxLineBytes) bytes")
                }
                let record: View
                do {
                    record = try reading(Array(pending[start..<end]))
                } catch {
                    throw SandboxJournalError(file: file, detail: "line \(line) is not a record: \(error)")
                }
                try each(record, Ref(offset: pendingOffset + Int64(start), length: Int32(end - start + 1)))
                start = end + 1
                line += 1
            }
            pendingOffset += Int64(start)
            pending.removeFirst(start)
            guard pending.count <= maxLineBytes else {
                throw SandboxJournalError(file: file, detail: "line \(line) is longer than \(maxLineBytes) bytes")
            }
        }
        // What follows the last line feed is a line cut short by a kill.
        let kept = pendingOffset
        do {
            if kept < total { try handle.truncate(atOffset: UInt64(kept)) }
            try handle.seekToEnd()
        } catch {
            throw SandboxJournalError(file: file, detail: "cannot be written: \(error)")
        }
        return SandboxJournal(handle: handle, file: file, size: Int(kept))
    }

    /// The position of the first line feed of `bytes` at or after `start` (memchr: a journal is read at disk speed).
    private static func lineFeed(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            guard start < buffer.count, let base = buffer.baseAddress,
                let found = memchr(base + start, 0x0A, buffer.count - start)
            else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
    }

    /// Appends one record (one line, one write); returns where its line is.
    @discardableResult
    func append(_ record: Record) throws -> Ref {
        let line = try Self.line(record)
        guard let handle else {
            lines?.append(line)
            return Ref(offset: Int64((lines?.count ?? 1) - 1), length: Int32(line.count))
        }
        try handle.write(contentsOf: line)
        defer { size += line.count }
        return Ref(offset: Int64(size), length: Int32(line.count))
    }

    /// The record whose line is at `ref` (``append(_:)``, ``open(_:maxBytes:each:)``), read back from the file.
    func read(_ ref: Ref) throws -> Record {
        let bytes: Data
        if let handle {
            var buffer = [UInt8](repeating: 0, count: Int(ref.length))
            let count = buffer.withUnsafeMutableBytes { raw in
                pread(handle.fileDescriptor, raw.baseAddress, Int(ref.length), off_t(ref.offset))
            }
            guard count == Int(ref.length), buffer.last == UInt8(ascii: "\n") else {
                throw SandboxJournalError(
                    file: file ?? URL(fileURLWithPath: "/"), detail: "has no line at offset \(ref.offset)")
            }
            bytes = Data(buffer.dropLast())
        } else if let lines, lines.indices.contains(Int(ref.offset)) {
            bytes = lines[Int(ref.offset)].dropLast()
        } else {
            throw SandboxJournalError(file: URL(fileURLWithPath: "/"), detail: "keeps no line \(ref.offset)")
        }
        do {
            return try JSONDecoder().decode(Record.self, from: bytes)
        } catch {
            throw SandboxJournalError(
                file: file ?? URL(fileURLWithPath: "/"),
                detail: "line at offset \(ref.offset) is not a record: \(error)")
        }
    }

    /// Every record of the journal, oldest first: the file read again a piece at a time from its start (the lines
    /// appended since included), or the lines kept in memory.
    func forEach(_ each: (Record) throws -> Void) throws {
        if let lines {
            for line in lines { try each(try JSONDecoder().decode(Record.self, from: line.dropLast())) }
            return
        }
        guard let file else { return }
        // A second handle, so that reading does not move where the next line is appended.
        let reader: FileHandle
        do {
            reader = try FileHandle(forReadingFrom: file)
        } catch {
            throw SandboxJournalError(file: file, detail: "cannot be read: \(error)")
        }
        defer { try? reader.close() }
        let decoder = JSONDecoder()
        var pending: [UInt8] = []
        var remaining = size
        while remaining > 0 {
            let piece: Data
            do {
                piece = try reader.read(upToCount: min(1 << 20, remaining)) ?? Data()
            } catch {
                throw SandboxJournalError(file: file, detail: "cannot be read: \(error)")
            }
            if piece.isEmpty { break }
            remaining -= piece.count
            pending.append(contentsOf: piece)
            var start = 0
            while let end = Self.lineFeed(in: pending, from: start) {
                do {
                    try each(try decoder.decode(Record.self, from: Data(pending[start..<end])))
                } catch let error as SandboxJournalError {
                    throw error
                } catch {
                    throw SandboxJournalError(file: file, detail: "a line is not a record: \(error)")
                }
                start = end + 1
            }
            pending.removeFirst(start)
        }
    }

    /// Replaces the file with `records`, what the simulator holds now (written to a new file, flushed, renamed over
    /// the old one, the folder flushed); appends go to the new file from then on.
    func compact(_ records: [Record]) throws {
        guard let handle, let file else { return }
        let fresh = file.appendingPathExtension("compacting")
        var data = Data()
        for record in records { data += try Self.line(record) }
        do {
            try? FileManager.default.removeItem(at: fresh)
            guard
                FileManager.default.createFile(
                    atPath: fresh.path, contents: data, attributes: [.posixPermissions: 0o600])
            else { throw SandboxJournalError(file: fresh, detail: "cannot be created") }
            let replacement = try FileHandle(forUpdating: fresh)
            try replacement.synchronize()
            guard rename(fresh.path, file.path) == 0 else {
                try? replacement.close()
                throw SandboxJournalError(file: file, detail: "cannot be replaced (errno \(errno))")
            }
            Self.synchronizeFolder(of: file)
            try replacement.seekToEnd()
            try? handle.close()
            self.handle = replacement
        } catch let error as SandboxJournalError {
            throw error
        } catch {
            throw SandboxJournalError(file: file, detail: "cannot be compacted: \(error)")
        }
        size = data.count
        compactedSize = data.count
    }

    private static func line(_ record: Record) throws -> Data {
        var line =
            try (record as? any JournalLine).map { Data(try $0.journalJSON().utf8) } ?? JSONEncoder().encode(record)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Flushes the folder holding `file`, so the rename itself is on disk.
    private static func synchronizeFolder(of file: URL) {
        guard let folder = FileHandle(forReadingAtPath: file.deletingLastPathComponent().path) else { return }
        try? folder.synchronize()
        try? folder.close()
    }
}

/// A record that writes its own journal line, for one written on every sale: the JSON its `Decodable` reads back,
/// without JSONEncoder's cost on kilobytes of signed text.
protocol JournalLine {
    func journalJSON() throws -> String
}

/// A simulator's journal that cannot be read or written.
struct SandboxJournalError: Error, CustomStringConvertible {
    var file: URL
    var detail: String

    var description: String { "the sandbox journal \(file.path) \(detail)" }
}
