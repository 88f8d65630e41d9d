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
final class SandboxJournal<Record: Codable> {
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

    /// No file: nothing is kept (a simulator in a test process).
    static var inMemory: SandboxJournal { SandboxJournal(handle: nil, file: nil, size: 0) }

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
        if !FileManager.default.fileExists(atPath: file.path) {
            guard
                FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
            else {
                throw SandboxJournalError(file: file, detail: "cannot be created")
            }
        }
        let handle: FileHandle
        let data: Data
        do {
            handle = try FileHandle(forUpdating: file)
            let size = try handle.seekToEnd()
            guard size <= UInt64(maxBytes) else {
                throw SandboxJournalError(file: file, detail: "is larger than \(maxBytes) bytes")
            }
            try handle.seek(toOffset: 0)
            data = try handle.readToEnd() ?? Data()
        } catch let error as SandboxJournalError {
            throw error
        } catch {
            throw SandboxJournalError(file: file, detail: "cannot be read: \(error)")
        }
        let (records, kept) = try parse(data, file: file)
        do {
            if kept < data.count { try handle.truncate(atOffset: UInt64(kept)) }  // a line cut short by a kill
            try handle.seekToEnd()
        } catch {
            throw SandboxJournalError(file: file, detail: "cannot be written: \(error)")
        }
        return (SandboxJournal(handle: handle, file: file, size: kept), records)
    }

    /// The records of `data`, and how many of its bytes they take (less than all when the last line was cut short).
    static func parse(_ data: Data, file: URL) throws -> (records: [Record], kept: Int) {
        let decoder = JSONDecoder()
        var records: [Record] = []
        var start = data.startIndex
        var line = 1
        while start < data.endIndex {
            guard let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                return (records, start - data.startIndex)
            }
            guard end - start <= maxLineBytes else {
                throw SandboxJournalError(file: file, detail: "line \(line) is longer than \(maxLineBytes) bytes")
            }
            do {
                records.append(try decoder.decode(Record.self, from: data[start..<end]))
            } catch {
                throw SandboxJournalError(file: file, detail: "line \(line) is not a record: \(error)")
            }
            start = end + 1
            line += 1
        }
        return (records, data.count)
    }

    /// Appends one record (one line, one write).
    func append(_ record: Record) throws {
        guard let handle else { return }
        let line = try Self.line(record)
        try handle.write(contentsOf: line)
        size += line.count
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
        var line = try JSONEncoder().encode(record)
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

/// A simulator's journal that cannot be read or written.
struct SandboxJournalError: Error, CustomStringConvertible {
    var file: URL
    var detail: String

    var description: String { "the sandbox journal \(file.path) \(detail)" }
}
