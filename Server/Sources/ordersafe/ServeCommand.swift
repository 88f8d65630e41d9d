import ArgumentParser
import Hummingbird
import Logging
import OrderSafeServer
import ServiceLifecycle

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
        logger.info(
            "starting",
            metadata: [
                "environment": "\(loaded.server.environment.rawValue)", "database": "\(loaded.database.url)",
            ])
        let app = try await OrderSafeApplication.build(settings: loaded, logger: logger)
        // SIGTERM and SIGINT stop the server gracefully: in-flight requests finish, for at most server.shutdown_seconds,
        // then whatever is left is cancelled.
        var configuration = ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(loaded.server.shutdownSeconds)
        try await ServiceGroup(configuration: configuration).run()
    }
}
