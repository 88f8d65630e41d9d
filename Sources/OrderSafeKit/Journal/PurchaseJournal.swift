import Foundation

/// The purchases on their way, one small JSON file each in a folder of the app's own: written atomically (a
/// temporary file, flushed to disk, renamed over the old one, the folder flushed) before every step, so a kill or a
/// power loss at any point leaves either the old or the new state, never half of one. Final purchases are removed.
/// Files that cannot be read are moved to `unreadable/` and reported, never dropped in silence and never a crash.
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
    private let files: any JournalFileSystem
    private var unreadable: URL { directory.appendingPathComponent("unreadable", isDirectory: true) }

    init(directory: URL, fileSystem: any JournalFileSystem = LocalFileSystem()) {
        self.directory = directory
        files = fileSystem
    }

    /// Every entry on disk, and the files that could not be read (moved aside).
    func entries() -> (entries: [JournalEntry], problems: [Problem]) {
        let names: [String]
        do {
            try files.createFolder(directory)
            names = try files.list(directory)
        } catch {
            return (
                [],
                [
                    Problem(
                        file: directory.lastPathComponent,
                        reason: "the journal folder cannot be read: \(Self.reason(error))")
                ]
            )
        }
        var entries: [JournalEntry] = []
        var problems: [Problem] = []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            try? files.remove(directory.appendingPathComponent(name))  // a write the app was killed in
        }
        for name in names.sorted() where name.hasSuffix(".json") {
            let url = directory.appendingPathComponent(name)
            do {
                entries.append(try read(url))
            } catch {
                problems.append(
                    Problem(file: name, reason: error is DecodingError ? "not a journal entry" : Self.reason(error)))
                setAside(url)
            }
        }
        return (entries.sorted { $0.createdAt < $1.createdAt }, problems)
    }

    /// Writes `entry` durably (it replaces the one with its id). Throws when the disk refuses, or when the journal
    /// is full and `entry` is new.
    func write(_ entry: JournalEntry) throws {
        try files.createFolder(directory)
        let target = url(for: entry.id)
        if !files.exists(target) {
            let count = (try? files.list(directory).filter { $0.hasSuffix(".json") }.count) ?? 0
            guard count < Self.maxEntries else { throw JournalError.full(Self.maxEntries) }
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        try files.writeDurably(try encoder.encode(entry), to: target)
    }

    /// Forgets a final purchase.
    func remove(_ id: UUID) {
        try? files.remove(url(for: id))
    }

    private func url(for id: UUID) -> URL {
        directory.appendingPathComponent(id.uuidString.lowercased() + ".json")
    }

    private func read(_ url: URL) throws -> JournalEntry {
        let size = try files.size(url)
        guard size <= Self.maxFileBytes else { throw JournalError.tooLarge(size) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let entry = try decoder.decode(JournalEntry.self, from: try files.read(url))
        guard url.lastPathComponent == entry.id.uuidString.lowercased() + ".json" else { throw JournalError.misnamed }
        return entry
    }

    private func setAside(_ url: URL) {
        try? files.createFolder(unreadable)
        let target = unreadable.appendingPathComponent("\(Int(Date().timeIntervalSince1970))-\(url.lastPathComponent)")
        if (try? files.rename(url, to: target)) == nil {
            try? files.remove(url)  // cannot even be moved: it would be reported at every launch
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
