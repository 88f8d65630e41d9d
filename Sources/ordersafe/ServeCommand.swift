import ArgumentParser
import Hummingbird
import Logging
import OrderSafeServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the OrderSafe server (migrates the database first).")

    @OptionGroup var settings: SettingsOptions

    @Option(help: "Address to listen on (ORDERSAFE_SERVER_HOST).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (ORDERSAFE_SERVER_PORT).")
    var port: Int?

    func run() async throws {
        var extra: [String: String] = [:]
        extra["server.host"] = host
        extra["server.port"] = port.map(String.init)
        let loaded = try await settings.load(extraFlags: extra)
        loaded.server.logFormat.bootstrap(level: loaded.server.logLevel)
        let logger = Logger(label: "ordersafe")
        logger.info("starting", metadata: [
            "environment": "\(loaded.server.environment.rawValue)", "database": "\(loaded.database.url)",
        ])
        let app = try await OrderSafeApplication.build(settings: loaded, logger: logger)
        // Hummingbird's service group stops on SIGTERM and SIGINT, letting in-flight requests finish.
        try await app.runService()
    }
}
