import Foundation

/// Durable jobs (order queries, reconciliation passes, sweeps), leased to one worker at a time across replicas.
public protocol JobQueue: Sendable {
    /// Schedules a job, or moves the pending one of the same kind and key earlier; a finished one is opened again.
    /// An empty payload keeps the one stored (a recurring job's watermark survives a restart).
    func enqueue(_ job: NewJob) async throws

    /// Leases up to `limit` due jobs of `lane` to `owner` until `now + lease`. Safe with several workers and replicas:
    /// PostgreSQL skips rows another transaction holds (`FOR UPDATE SKIP LOCKED`); SQLite has one writer.
    func claimJobs(owner: String, limit: Int, lease: TimeInterval, now: Date, lane: JobLane) async throws
        -> [ClaimedJob]

    /// Finishes a claimed job; false when the fence no longer matches (the lease expired and another worker
    /// claimed the job), in which case nothing is written.
    func complete(_ job: ClaimedJob, _ result: JobResult, at: Date) async throws -> Bool

    /// Unfinished jobs: how many are due at `now`, and how many wait for later.
    func pendingJobs(now: Date) async throws -> (due: Int, later: Int)
}

extension JobQueue {
    /// Leases due jobs of every kind (``claimJobs(owner:limit:lease:now:lane:)`` with ``JobLane/all``).
    public func claimJobs(owner: String, limit: Int, lease: TimeInterval, now: Date) async throws -> [ClaimedJob] {
        try await claimJobs(owner: owner, limit: limit, lease: lease, now: now, lane: .all)
    }
}

/// Which kinds of job a worker claims: long work (a day's statement) runs on a lane of its own, so it never holds up
/// the order queries that are a paid order's way in when its notification is lost.
public enum JobLane: Sendable, Hashable {
    case all
    case only(Set<JobKind>)
    case except(Set<JobKind>)
}
