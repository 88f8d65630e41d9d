import ArgumentParser
import Foundation
import Ledger
import Logging
import OrderSafeServer

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up the SQLite ledger while the server serves (a consistent snapshot, checked, with a manifest)."
    )

    @Option(help: "The backup file to write (default: a new file named for the time in backup.dir).")
    var to: String?

    @OptionGroup var settings: SettingsOptions

    func run() async throws {
        let loaded = try await settings.load()
        loaded.server.logFormat.bootstrap(level: loaded.server.logLevel)
        let logger = Logger(label: "ordersafe.backup")
        let now = Date()
        let file =
            to.map { URL(fileURLWithPath: $0) }
            ?? LedgerBackup.file(in: URL(fileURLWithPath: loaded.backup?.directory ?? "backups"), at: now)
        do {
            let manifest = try await LedgerDatabase.with(url: loaded.database.url, logger: logger) { database in
                try await LedgerBackup.write(database, to: file, now: now, logger: logger)
            }
            print(
                "\(file.path): \(manifest.bytes) bytes, schema \(manifest.schemaVersion), \(manifest.orders) orders, "
                    + "last event \(manifest.lastEventID), sha256 \(manifest.sha256)")
        } catch let error as BackupError {
            throw Self.failure(error)
        }
    }

    /// A backup or restore that did not happen: its reason on standard error, exit status 1.
    static func failure(_ error: BackupError) -> ExitCode {
        FileHandle.standardError.write(Data("ordersafe: \(error)\n".utf8))
        return ExitCode(1)
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract:
            "Restore a backup as the SQLite ledger (checksum checked, migrated forward); never over a ledger that exists."
    )

    @Argument(help: "The backup file (its manifest beside it).")
    var from: String

    @OptionGroup var settings: SettingsOptions

    func run() async throws {
        let loaded = try await settings.load()
        loaded.server.logFormat.bootstrap(level: loaded.server.logLevel)
        guard case .sqliteFile(let path) = loaded.database.url else {
            throw BackupCommand.failure(.notSQLiteFile)
        }
        do {
            let manifest = try await LedgerBackup.restore(
                URL(fileURLWithPath: from), into: path, logger: Logger(label: "ordersafe.restore"))
            print(
                "\(path): restored from \(from) (taken \(manifest.createdAt.formatted(.iso8601)), \(manifest.orders) "
                    + "orders, last event \(manifest.lastEventID)); schema at version \(Migrator.latestVersion). "
                    + "Payments taken since then are in the providers' records: reconcile each day since.")
        } catch let error as BackupError {
            throw BackupCommand.failure(error)
        }
    }
}
