import Foundation
import Ledger
import Logging
import OrderSafeModel

/// Claims due jobs from the ledger and runs them with the reconciler; what the server's background worker
/// and `ordersafe reconcile` share. Several runners (threads, replicas) may work one ledger at once.
public struct JobRunner: Sendable {
    let ledger: any JobQueue
    let reconciler: Reconciler
    let clock: any WallClock
    let logger: Logger
    /// Names this runner's leases (host and process), for operators reading the jobs table.
    public let owner: String
    let batchSize: Int
    let lease: TimeInterval
    /// The kinds of job this runner claims.
    public let lane: JobLane

    public init(
        ledger: any JobQueue, reconciler: Reconciler, clock: any WallClock, logger: Logger, owner: String,
        batchSize: Int = 16, lease: TimeInterval = 120, lane: JobLane = .all
    ) {
        self.ledger = ledger
        self.reconciler = reconciler
        self.clock = clock
        self.logger = logger
        self.owner = owner
        self.batchSize = batchSize
        self.lease = lease
        self.lane = lane
    }

    /// The same runner on `lane`, its leases lasting `lease` (a lane of long jobs needs longer ones).
    public func on(_ lane: JobLane, lease: TimeInterval? = nil) -> JobRunner {
        JobRunner(
            ledger: ledger, reconciler: reconciler, clock: clock, logger: logger, owner: owner, batchSize: batchSize,
            lease: lease ?? self.lease, lane: lane)
    }

    /// What one pass did.
    public struct Tally: Sendable, Equatable {
        public var done = 0
        public var rescheduled = 0
        /// Completions refused because another runner had taken the job over (its lease had run out).
        public var fencedOff = 0
        public var total: Int { done + rescheduled + fencedOff }
    }

    /// Runs every job due now, batch after batch, until none is left; `progress` hears after each job.
    public func runDue(progress: @Sendable (Tally) -> Void = { _ in }) async throws -> Tally {
        var tally = Tally()
        while true {
            let jobs = try await ledger.claimJobs(
                owner: owner, limit: batchSize, lease: lease, now: clock.now(), lane: lane)
            if jobs.isEmpty { return tally }
            for job in jobs {
                let result = await reconciler.run(job)
                if try await ledger.complete(job, result, at: clock.now()) {
                    if result == .done { tally.done += 1 } else { tally.rescheduled += 1 }
                } else {
                    tally.fencedOff += 1
                    logger.notice(
                        "job completion fenced off", metadata: ["job_id": "\(job.id)", "kind": "\(job.kind)"])
                }
                progress(tally)
            }
        }
    }
}

extension JobRunner {
    /// `host:pid`, naming this process's leases.
    public static var processOwner: String {
        "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"
    }
}
