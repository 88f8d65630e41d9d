import ArgumentParser
import Ledger
import Logging

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending ledger migrations and exit.")

    @OptionGroup var settings: SettingsOptions

    func run() async throws {
        let loaded = try await settings.load()
        loaded.server.logFormat.bootstrap(level: loaded.server.logLevel)
        let logger = Logger(label: "ordersafe.migrate")
        let applied = try await LedgerDatabase.with(url: loaded.database.url, logger: logger) { database in
            try await Migrator(database: database, logger: logger).migrate()
        }
        print("\(loaded.database.url): applied \(applied) migration(s); schema at version \(Migrator.latestVersion)")
    }
}
