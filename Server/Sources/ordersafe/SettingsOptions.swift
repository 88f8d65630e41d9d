import ArgumentParser
import Foundation
import OrderSafeServer

/// Flags shared by every command that reads the settings; each overrides its `ORDERSAFE_…` variable.
struct SettingsOptions: ParsableArguments {
    @Option(help: "JSON config file (or ORDERSAFE_CONFIG_FILE).")
    var config: String?

    @Option(help: "Database URL: sqlite:PATH or postgres://user:password@host:port/db (ORDERSAFE_DATABASE_URL).")
    var database: String?

    @Option(
        name: .customLong("data-dir"),
        help: "Folder for the embedded database and sandbox credentials (ORDERSAFE_SERVER_DATA_DIR).")
    var dataDirectory: String?

    @Option(help: "Catalog JSON file (ORDERSAFE_CATALOG_FILE); default: the bundled example.")
    var catalog: String?

    @Option(name: .customLong("log-format"), help: "text or json (ORDERSAFE_SERVER_LOG_FORMAT).")
    var logFormat: String?

    @Option(name: .customLong("log-level"), help: "trace … critical (ORDERSAFE_SERVER_LOG_LEVEL).")
    var logLevel: String?

    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["database.url"] = database
        flags["server.data_dir"] = dataDirectory
        flags["catalog.file"] = catalog
        flags["server.log_format"] = logFormat
        flags["server.log_level"] = logLevel
        return flags
    }

    /// Loads the settings, turning a bad value into a clear message and exit code 2.
    func load(extraFlags: [String: String] = [:]) async throws -> Settings {
        do {
            return try await SettingsLoader.load(
                flags: flags.merging(extraFlags) { $1 }, environment: ProcessInfo.processInfo.environment,
                configFile: config)
        } catch let error as SettingsError {
            throw ValidationError(error.description)
        }
    }
}
