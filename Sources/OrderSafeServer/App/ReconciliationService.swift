import Engine
import Logging
import ServiceLifecycle

/// Runs due reconciliation jobs in the background, polling the ledger's queue; stops on graceful shutdown.
/// Every replica runs one: the queue's leases and fences keep them from doing a job twice at once.
struct ReconciliationService: Service {
    let runner: JobRunner
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let tally = try await runner.runDue()
                    if tally.total > 0 {
                        logger.info("reconciliation pass", metadata: [
                            "done": "\(tally.done)", "rescheduled": "\(tally.rescheduled)", "fenced_off": "\(tally.fencedOff)",
                        ])
                    }
                } catch {
                    logger.error("reconciliation pass failed", metadata: ["error": "\(String(reflecting: error))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
