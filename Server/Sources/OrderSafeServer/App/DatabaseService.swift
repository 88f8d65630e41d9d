import Ledger
import ServiceLifecycle

/// Closes the database pool after the HTTP server has drained (services stop in reverse order).
struct DatabaseService: Service {
    let database: LedgerDatabase

    func run() async throws {
        try? await gracefulShutdown()
        try await database.shutdown()
    }
}
