import Logging
import ServiceLifecycle

/// Runs one background duty (reconciliation, webhook delivery) every `interval` until graceful shutdown. Every
/// replica runs its own: the ledger's leases and fences keep them from doing the same work twice at once.
struct PeriodicWorkService: Service {
    let name: String
    let interval: Duration
    let logger: Logger
    /// One pass; returns a summary worth logging, or nil when there was nothing to do.
    let work: @Sendable () async throws -> String?

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if let summary = try await work() {
                        logger.info("\(name) pass", metadata: ["summary": "\(summary)"])
                    }
                } catch {
                    // Shutting down: the pass stopped where it was; that is no failure.
                    if Task.isCancelled { break }
                    logger.error("\(name) pass failed", metadata: ["error": "\(String(reflecting: error))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
