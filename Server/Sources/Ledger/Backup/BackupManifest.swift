import Foundation

/// What one backup of the ledger holds, written beside it as `<backup>.manifest.json` and checked before a restore.
public struct BackupManifest: Codable, Sendable, Equatable {
    /// This manifest's format; a restore refuses any other.
    public static let currentFormat = "ordersafe-ledger-backup-1"

    public var format: String
    /// The backup's file name, in the manifest's folder.
    public var file: String
    public var engine: String
    /// The ledger's schema version in the backup; a restore migrates it forward to this binary's.
    public var schemaVersion: Int
    public var createdAt: Date
    /// The newest order event in the backup: everything the ledger had recorded up to it is there.
    public var lastEventID: Int64
    public var orders: Int64
    public var bytes: Int64
    /// SHA-256 of the backup's bytes, lowercase hex.
    public var sha256: String

    enum CodingKeys: String, CodingKey {
        case format, file, engine, orders, bytes, sha256
        case schemaVersion = "schema_version"
        case createdAt = "created_at"
        case lastEventID = "last_event_id"
    }

    /// The manifest file of backup `file`.
    public static func url(of file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".manifest.json")
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }()

    /// Reads and checks a manifest (at most 64 KiB: it is a file on disk, untrusted like any).
    public static func read(_ url: URL) throws(BackupError) -> BackupManifest {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            data = try handle.read(upToCount: 64 * 1024 + 1) ?? Data()
        } catch {
            throw .unreadable(url.path, "no manifest: \(error.localizedDescription)")
        }
        guard data.count <= 64 * 1024 else { throw .unreadable(url.path, "the manifest is over 64 KiB") }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let manifest: BackupManifest
        do {
            manifest = try decoder.decode(BackupManifest.self, from: data)
        } catch {
            throw .unreadable(url.path, "the manifest is not one: \(error)")
        }
        guard manifest.format == currentFormat else {
            throw .unreadable(url.path, "format '\(manifest.format.prefix(64))' is not \(currentFormat)")
        }
        guard manifest.engine == "sqlite", manifest.bytes >= 0, manifest.schemaVersion >= 1,
            manifest.sha256.utf8.count == 64, !manifest.file.contains("/"), !manifest.file.isEmpty
        else { throw .unreadable(url.path, "the manifest's fields are out of range") }
        return manifest
    }
}

/// Why a backup or a restore did not happen.
public enum BackupError: Error, CustomStringConvertible, Equatable {
    /// Only an SQLite ledger in a file is backed up this way (PostgreSQL: base backups and WAL archiving).
    case notSQLiteFile
    /// The destination exists already: a backup never replaces a file.
    case destinationExists(String)
    /// A restore never replaces a ledger that exists.
    case ledgerExists(String)
    /// The backup, or its manifest, cannot be read or is not one.
    case unreadable(String, String)
    /// The backup's bytes are not the ones its manifest names.
    case checksumMismatch(String)
    /// SQLite's own check of the backup failed.
    case integrity(String)

    public var description: String {
        switch self {
        case .notSQLiteFile:
            "only an SQLite ledger in a file is backed up by ordersafe backup; back up PostgreSQL with base backups and WAL archiving (scripts/ops/pg-backup)"
        case .destinationExists(let path): "\(path) exists: a backup never replaces a file"
        case .ledgerExists(let path):
            "\(path) exists: restore only into an empty data folder (move the ledger aside first, never over a live one)"
        case .unreadable(let path, let reason): "\(path): \(reason)"
        case .checksumMismatch(let path): "\(path): its bytes are not the ones its manifest names (SHA-256 differs)"
        case .integrity(let reason): "the backup failed SQLite's integrity check: \(reason)"
        }
    }
}
