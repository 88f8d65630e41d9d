import Foundation
import Ledger
import OrderSafeModel

/// One channel's daily statement run, as a recurring job: from `hour` of each provider day, every day since the
/// last one checked up to yesterday is reconciled, oldest first; a day not published yet is asked for again every
/// half hour. Each day's run is time-boxed (``timeBox``); a day that fails or runs out of time is tried again after a
/// growing wait (``retryAfter(failures:)``), not back to back. The job runs on a lane of its own (``JobLane``).
public struct StatementChore: ChannelChore {
    let reconciler: StatementReconciler
    let channel: Channel
    let utcOffset: Int
    let hour: Int
    let timeBox: Duration

    /// How far back a first run, or one after a long stop, starts.
    static let maxCatchUpDays = 31
    static let retryWhileWaiting: TimeInterval = 1800
    /// The longest one day's run may take: a day of a million lines is read and compared in under a minute here
    /// (docs/benchmarks.md); twenty leave room for a slow provider and a large day.
    public static let defaultTimeBox: Duration = .seconds(20 * 60)
    /// How long the statements lane leases its job: past the time box, so no second runner takes a day that runs.
    public static let lease: TimeInterval = 30 * 60

    public init(
        reconciler: StatementReconciler, channel: Channel, utcOffset: Int, hour: Int,
        timeBox: Duration = defaultTimeBox
    ) {
        self.reconciler = reconciler
        self.channel = channel
        self.utcOffset = utcOffset
        self.hour = hour
        self.timeBox = timeBox
    }

    public var kind: JobKind { .statements }
    public var key: String { channel.rawValue }

    /// The wait after the `failures`-th failure in a row: half an hour, doubling, at most six hours.
    static func retryAfter(failures: Int) -> TimeInterval {
        min(1800 * TimeInterval(1 << min(max(failures - 1, 0), 8)), 6 * 3600)
    }

    /// The payload: the last day checked, and how many runs in a row failed since (`2026-11-25` or
    /// `2026-11-25;failures=2`).
    struct Progress: Equatable {
        var done: String
        var failures = 0

        init(done: String, failures: Int = 0) {
            self.done = done
            self.failures = failures
        }

        init(_ payload: String) {
            let parts = payload.split(separator: ";", maxSplits: 1)
            done = parts.first.map(String.init) ?? ""
            failures =
                parts.count > 1 ? Int(parts[1].dropFirst("failures=".count)).map { min(max($0, 0), 1000) } ?? 0 : 0
        }

        var payload: String { failures == 0 ? done : "\(done);failures=\(failures)" }
    }

    public func run(payload: String, now: Date) async throws -> (next: Date, payload: String) {
        let progress = Progress(payload)
        let today = StatementDay(containing: now, utcOffset: utcOffset)
        let publishedAt = today.start(utcOffset: utcOffset).addingTimeInterval(TimeInterval(hour * 3600))
        guard now >= publishedAt else { return (publishedAt, payload) }
        let yesterday = StatementDay(containing: today.start(utcOffset: utcOffset) - 1, utcOffset: utcOffset)
        var oldest = yesterday
        for _ in 1..<Self.maxCatchUpDays {
            oldest = StatementDay(containing: oldest.start(utcOffset: utcOffset) - 1, utcOffset: utcOffset)
        }
        var day = max(StatementDay(progress.done)?.next ?? yesterday, oldest)
        var done = progress.done
        while day <= yesterday {
            let status: StatementReport.Status
            do {
                status = try await Self.timeBoxed(timeBox, channel: channel, day: day) { [reconciler, channel, day] in
                    try await reconciler.reconcile(channel, day: day).status
                }
            } catch {
                if Task.isCancelled { throw error }  // the server stopping: no failure of the day's
                let failures = progress.failures + 1
                throw ChoreRetry(
                    next: now.addingTimeInterval(Self.retryAfter(failures: failures)),
                    payload: Progress(done: done, failures: failures).payload, reason: error)
            }
            if status == .waiting {
                return (now.addingTimeInterval(Self.retryWhileWaiting), done)
            }
            done = day.description
            day = day.next
        }
        return (today.next.start(utcOffset: utcOffset).addingTimeInterval(TimeInterval(hour * 3600)), done)
    }

    /// `work`, cancelled once `box` has passed (its reading of the file stops at its next piece, its provider calls
    /// at once) and then refused with ``StatementError/timedOut(_:day:_:)``.
    static func timeBoxed<T: Sendable>(
        _ box: Duration, channel: Channel, day: StatementDay, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: box)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw StatementError.timedOut(channel, day: day.description, box)
            }
            return value
        }
    }
}
