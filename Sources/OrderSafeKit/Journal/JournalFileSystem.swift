import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The file operations the purchase journal is made of. ``LocalFileSystem`` is the device's own; tests stand in a
/// disk that tears a write or forgets what was never synced when the power goes, so crash safety is checked, not
/// assumed.
protocol JournalFileSystem: Sendable {
    /// Creates `folder` and its parents for the app alone (on iOS, readable after the first unlock).
    func createFolder(_ folder: URL) throws
    /// The names in `folder`.
    func list(_ folder: URL) throws -> [String]
    func exists(_ file: URL) -> Bool
    func size(_ file: URL) throws -> Int
    func read(_ file: URL) throws -> Data
    /// Creates `file` (readable by the app alone) holding `data`; nothing of it is on the disk for sure yet.
    func create(_ file: URL, with data: Data) throws
    /// Puts `file`'s contents on the disk (`fsync`).
    func sync(_ file: URL) throws
    /// Replaces `target` by `source` in one step (`rename`).
    func rename(_ source: URL, to target: URL) throws
    /// Puts `folder`'s names (what was created or renamed in it) on the disk; best effort where a file system
    /// cannot sync a folder.
    func syncFolder(_ folder: URL) throws
    func remove(_ file: URL) throws
}

extension JournalFileSystem {
    /// Replaces `target` with `data` so that a kill or a power loss at any point leaves the old contents or the new,
    /// whole: a temporary file beside it, flushed to disk, renamed over it (atomic on one file system), then the
    /// folder flushed so the rename itself survives a power loss.
    func writeDurably(_ data: Data, to target: URL) throws {
        let folder = target.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(UUID().uuidString).tmp")
        do {
            try create(temporary, with: data)
            try sync(temporary)
            try rename(temporary, to: target)
        } catch {
            try? remove(temporary)
            throw error
        }
        try syncFolder(folder)
    }
}

/// The device's file system.
struct LocalFileSystem: JournalFileSystem {
    /// Puts an open file's (or folder's) contents on the storage device; 0 when done. The real one by default; a test
    /// stands in one that counts and orders the flushes, so a write that skips one is caught on the real disk too.
    let flush: @Sendable (Int32) -> Int32

    init(flush: @escaping @Sendable (Int32) -> Int32 = LocalFileSystem.flushToStorage) {
        self.flush = flush
    }

    /// `fsync`, and on Apple's systems `F_FULLFSYNC`: there `fsync` hands the data to the drive, which may keep it
    /// in its cache across a power loss (fsync(2) on Darwin says so and points to `F_FULLFSYNC`; SQLite's
    /// `fullfsync` pragma exists for the same reason). The journal writes a few small files per purchase, so the
    /// full flush's milliseconds are worth the entry that says a charge was asked for. A file system that refuses
    /// `F_FULLFSYNC` (some network and FUSE ones) gets the plain `fsync`.
    @Sendable static func flushToStorage(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }

    func createFolder(_ folder: URL) throws {
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o700]
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        // Readable after the first unlock, so a background launch (a transaction update) can resume purchases.
        attributes[.protectionKey] = FileProtectionType.completeUntilFirstUserAuthentication
        #endif
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: attributes)
    }

    func list(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path)
    }

    func exists(_ file: URL) -> Bool {
        FileManager.default.fileExists(atPath: file.path)
    }

    func size(_ file: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
    }

    func read(_ file: URL) throws -> Data {
        try Data(contentsOf: file)
    }

    func create(_ file: URL, with data: Data) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw JournalError.notWritable(file.lastPathComponent)
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.write(contentsOf: data)
    }

    func sync(_ file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        guard flush(handle.fileDescriptor) == 0 else { throw JournalError.notWritable(file.lastPathComponent) }
    }

    func rename(_ source: URL, to target: URL) throws {
        #if canImport(Darwin)
        let renamed = Darwin.rename(source.path, target.path)
        #else
        let renamed = Glibc.rename(source.path, target.path)
        #endif
        guard renamed == 0 else { throw JournalError.notWritable(target.lastPathComponent) }
    }

    func syncFolder(_ folder: URL) throws {
        let descriptor = open(folder.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = flush(descriptor)
        _ = close(descriptor)
    }

    func remove(_ file: URL) throws {
        try FileManager.default.removeItem(at: file)
    }
}
