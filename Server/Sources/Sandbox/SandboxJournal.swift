import Foundation

/// What a simulator did, kept in its data folder as JSON lines and read back when it starts again on that folder: a
/// provider does not forget a payment, a queued transaction or an unacknowledged notification because the merchant's
/// server (which runs the built-in simulators) was killed.
///
/// Each record is appended with one `write` before the simulator answers whoever caused it, so a process killed at any
/// moment leaves every record it answered for (the kernel keeps a killed process's writes; a power loss is not
/// simulated). The file is read strictly: a line that is not a record is an error naming its line, except a last line
/// cut short by a kill, which is dropped.
struct SandboxJournal<Record: Codable> {
    /// The largest journal read back, and the longest record.
    static var maxBytes: Int { 512 * 1024 * 1024 }
    static var maxLineBytes: Int { 1024 * 1024 }

    private let handle: FileHandle?

    /// No file: nothing is kept (a simulator in a test process).
    static var inMemory: SandboxJournal { SandboxJournal(handle: nil) }

    private init(handle: FileHandle?) {
        self.handle = handle
    }

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
        return (SandboxJournal(handle: handle), records)
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
        var line = try JSONEncoder().encode(record)
        line.append(UInt8(ascii: "\n"))
        try handle.write(contentsOf: line)
    }
}

/// A simulator's journal that cannot be read or written.
struct SandboxJournalError: Error, CustomStringConvertible {
    var file: URL
    var detail: String

    var description: String { "the sandbox journal \(file.path) \(detail)" }
}
