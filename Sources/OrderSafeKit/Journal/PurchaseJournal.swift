import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The purchases on their way, one small JSON file each in a folder of the app's own: written atomically (a
/// temporary file, flushed to disk, renamed over the old one) before every step, so a kill at any point leaves
/// either the old or the new state, never half of one. Final purchases are removed. Files that cannot be read
/// are moved to `unreadable/` and reported, never dropped in silence and never a crash.
actor PurchaseJournal {
    /// At most this many purchases on their way; a new purchase beyond it is refused (nothing is evicted).
    static let maxEntries = 256
    /// A journal file larger than this is not read (an entry is a few KiB; a signed transaction is under 8 KiB).
    static let maxFileBytes = 64 * 1024

    struct Problem: Sendable, Hashable {
        var file: String
        var reason: String
    }

    let directory: URL
    private var unreadable: URL { directory.appendingPathComponent("unreadable", isDirectory: true) }

    init(directory: URL) {
        self.directory = directory
    }

    /// Every entry on disk, and the files that could not be read (moved aside).
    func entries() -> (entries: [JournalEntry], problems: [Problem]) {
        let files: [String]
        do {
            try prepare()
            files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            return ([], [Problem(file: directory.lastPathComponent, reason: "the journal folder cannot be read: \(Self.reason(error))")])
        }
        var entries: [JournalEntry] = []
        var problems: [Problem] = []
        for name in files where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))  // a write the app was killed in
        }
        for name in files.sorted() where name.hasSuffix(".json") {
            let url = directory.appendingPathComponent(name)
            do {
                entries.append(try read(url))
            } catch {
                problems.append(Problem(file: name, reason: error is DecodingError ? "not a journal entry" : Self.reason(error)))
                setAside(url)
            }
        }
        return (entries.sorted { $0.createdAt < $1.createdAt }, problems)
    }

    /// Writes `entry` durably (it replaces the one with its id). Throws when the disk refuses, or when the journal
    /// is full and `entry` is new.
    func write(_ entry: JournalEntry) throws {
        try prepare()
        let target = url(for: entry.id)
        if !FileManager.default.fileExists(atPath: target.path) {
            let count = (try? FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.count) ?? 0
            guard count < Self.maxEntries else { throw JournalError.full(Self.maxEntries) }
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        try Self.writeDurably(try encoder.encode(entry), to: target)
    }

    /// Forgets a final purchase.
    func remove(_ id: UUID) {
        try? FileManager.default.removeItem(at: url(for: id))
    }

    private func url(for id: UUID) -> URL {
        directory.appendingPathComponent(id.uuidString.lowercased() + ".json")
    }

    private func read(_ url: URL) throws -> JournalEntry {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        if let size = attributes[.size] as? NSNumber, size.intValue > Self.maxFileBytes {
            throw JournalError.tooLarge(size.intValue)
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let entry = try decoder.decode(JournalEntry.self, from: try Data(contentsOf: url))
        guard url.lastPathComponent == entry.id.uuidString.lowercased() + ".json" else { throw JournalError.misnamed }
        return entry
    }

    private func setAside(_ url: URL) {
        try? FileManager.default.createDirectory(at: unreadable, withIntermediateDirectories: true)
        let target = unreadable.appendingPathComponent("\(Int(Date().timeIntervalSince1970))-\(url.lastPathComponent)")
        if (try? FileManager.default.moveItem(at: url, to: target)) == nil {
            try? FileManager.default.removeItem(at: url)  // cannot even be moved: it would be reported at every launch
        }
    }

    private func prepare() throws {
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o700]
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        // Readable after the first unlock, so a background launch (a transaction update) can resume purchases.
        attributes[.protectionKey] = FileProtectionType.completeUntilFirstUserAuthentication
        #endif
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: attributes)
    }

    /// A temporary file beside `target`, flushed to disk, renamed over `target` (atomic on one file system), then
    /// the folder flushed so the rename itself survives a power loss.
    static func writeDurably(_ data: Data, to target: URL) throws {
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw JournalError.notWritable(temporary.lastPathComponent)
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        guard rename(temporary.path, target.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw JournalError.notWritable(target.lastPathComponent)
        }
        let folder = open(target.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            _ = fsync(folder)
            _ = close(folder)
        }
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? JournalError { return error.description }
        return (error as NSError).localizedDescription
    }
}

enum JournalError: Error, CustomStringConvertible {
    case full(Int)
    case tooLarge(Int)
    case misnamed
    case notWritable(String)

    var description: String {
        switch self {
        case .full(let count): "the journal already holds \(count) purchases on their way"
        case .tooLarge(let bytes): "a journal file of \(bytes) bytes"
        case .misnamed: "a journal entry under another entry's name"
        case .notWritable(let name): "\(name) cannot be written"
        }
    }
}
