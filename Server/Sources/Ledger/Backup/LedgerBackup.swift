import Crypto
import Foundation
import Logging
import SQLKit

/// Online backups of an SQLite ledger and their restore. A backup is SQLite's `VACUUM INTO` — a consistent snapshot
/// taken in one read transaction while the server serves (sqlite.org/lang_vacuum.html: "the VACUUM INTO command is
/// transactional in the sense that the generated output database is a consistent snapshot of the original"), never a
/// copy of a live file — checked by SQLite's `integrity_check` and described by a manifest with its checksum.
public enum LedgerBackup {
    /// The file a backup taken at `date` is named in `directory`: `ordersafe-YYYYMMDDTHHMMSSZ.sqlite`.
    public static func file(in directory: URL, at date: Date) -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return directory.appendingPathComponent("ordersafe-\(formatter.string(from: date)).sqlite")
    }

    /// Writes a backup of `database` to `file` (which must not exist) and its manifest beside it.
    public static func write(_ database: LedgerDatabase, to file: URL, now: Date, logger: Logger) async throws
        -> BackupManifest
    {
        guard case .sqliteFile = database.url else { throw BackupError.notSQLiteFile }
        let files = FileManager.default
        let manifestURL = BackupManifest.url(of: file)
        for path in [file.path, manifestURL.path] where files.fileExists(atPath: path) {
            throw BackupError.destinationExists(path)
        }
        try files.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let partial = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).partial")
        try? files.removeItem(at: partial)
        do {
            try await database.read { db in try await db.sql("VACUUM INTO \(bind: partial.path)").run() }
            let contents = try await inspect(partial, logger: logger)
            let (bytes, sha256) = try digest(partial)
            let manifest = BackupManifest(
                format: BackupManifest.currentFormat, file: file.lastPathComponent, engine: "sqlite",
                schemaVersion: contents.schemaVersion, createdAt: now, lastEventID: contents.lastEventID,
                orders: contents.orders, bytes: bytes, sha256: sha256)
            try files.moveItem(at: partial, to: file)
            try BackupManifest.encoder.encode(manifest).write(to: manifestURL, options: .atomic)
            return manifest
        } catch {
            try? files.removeItem(at: partial)
            throw error
        }
    }

    /// Checks a backup against its manifest (size and SHA-256) and returns the manifest.
    public static func verify(_ file: URL) throws -> BackupManifest {
        let manifest = try BackupManifest.read(BackupManifest.url(of: file))
        guard manifest.file == file.lastPathComponent else {
            throw BackupError.unreadable(file.path, "its manifest names another file, \(manifest.file)")
        }
        let (bytes, sha256) = try digest(file)
        guard bytes == manifest.bytes, sha256 == manifest.sha256 else { throw BackupError.checksumMismatch(file.path) }
        return manifest
    }

    /// Restores backup `file` as the SQLite ledger at `path`, which must not exist, and migrates it forward to this
    /// binary's schema. Returns the backup's manifest.
    public static func restore(_ file: URL, into path: String, logger: Logger) async throws -> BackupManifest {
        let manifest = try verify(file)
        let files = FileManager.default
        for existing in [path, path + "-wal", path + "-journal"] where files.fileExists(atPath: existing) {
            throw BackupError.ledgerExists(existing)
        }
        let target = URL(fileURLWithPath: path)
        try files.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let partial = target.deletingLastPathComponent().appendingPathComponent(
            ".\(target.lastPathComponent).restoring")
        try? files.removeItem(at: partial)
        try files.copyItem(at: file, to: partial)
        do {
            // The copy checked again (a disk that returns other bytes than it was given is why backups are restored).
            guard try digest(partial) == (manifest.bytes, manifest.sha256) else {
                throw BackupError.checksumMismatch(partial.path)
            }
            _ = try await inspect(partial, logger: logger)
            try files.moveItem(at: partial, to: target)
        } catch {
            try? files.removeItem(at: partial)
            throw error
        }
        try await LedgerDatabase.with(url: .sqliteFile(path: path), logger: logger) { database in
            _ = try await Migrator(database: database, logger: logger).migrate()
        }
        return manifest
    }

    struct Contents {
        var schemaVersion: Int
        var lastEventID: Int64
        var orders: Int64
    }

    /// Opens a backup, runs SQLite's integrity check and reads what the manifest says of it.
    static func inspect(_ file: URL, logger: Logger) async throws -> Contents {
        try await LedgerDatabase.with(url: .sqliteFile(path: file.path), logger: logger) { database in
            try await database.read { db in
                let check = try await db.sql("PRAGMA integrity_check").all()
                let verdicts = try check.prefix(5).map { try $0.decode(column: "integrity_check", as: String.self) }
                guard verdicts == ["ok"] else { throw BackupError.integrity(verdicts.joined(separator: "; ")) }
                let version = try await db.sql("SELECT MAX(version) AS v FROM schema_migrations").first()?
                    .decode(column: "v", as: Int?.self)
                let event = try await db.sql("SELECT MAX(id) AS v FROM order_events").first()?
                    .decode(column: "v", as: Int64?.self)
                let orders = try await db.sql("SELECT COUNT(*) AS v FROM orders").first()?
                    .decode(column: "v", as: Int64.self)
                guard let version else { throw BackupError.integrity("no schema version: not a ledger") }
                return Contents(schemaVersion: version, lastEventID: event ?? 0, orders: orders ?? 0)
            }
        }
    }

    /// The file's size and SHA-256 (lowercase hex), read a megabyte at a time.
    static func digest(_ file: URL) throws -> (bytes: Int64, sha256: String) {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: file)
        } catch {
            throw BackupError.unreadable(file.path, error.localizedDescription)
        }
        defer { try? handle.close() }
        var hash = SHA256()
        var bytes: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash.update(data: chunk)
            bytes += Int64(chunk.count)
        }
        return (bytes, hash.finalize().map { String(format: "%02x", $0) }.joined())
    }
}
