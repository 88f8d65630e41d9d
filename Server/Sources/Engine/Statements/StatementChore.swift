import Foundation
import Ledger
import OrderSafeModel

/// One channel's daily statement run, as a recurring job: from `hour` of each provider day, every day since the
/// last one checked up to yesterday is reconciled, oldest first; a day not published yet is asked for again every
/// half hour.
public struct StatementChore: ChannelChore {
    let reconciler: StatementReconciler
    let channel: Channel
    let utcOffset: Int
    let hour: Int

    /// How far back a first run, or one after a long stop, starts.
    static let maxCatchUpDays = 31
    static let retryWhileWaiting: TimeInterval = 1800

    public init(reconciler: StatementReconciler, channel: Channel, utcOffset: Int, hour: Int) {
        self.reconciler = reconciler
        self.channel = channel
        self.utcOffset = utcOffset
        self.hour = hour
    }

    public var kind: JobKind { .statements }
    public var key: String { channel.rawValue }

    public func run(payload: String, now: Date) async throws -> (next: Date, payload: String) {
        let today = StatementDay(containing: now, utcOffset: utcOffset)
        let publishedAt = today.start(utcOffset: utcOffset).addingTimeInterval(TimeInterval(hour * 3600))
        guard now >= publishedAt else { return (publishedAt, payload) }
        let yesterday = StatementDay(containing: today.start(utcOffset: utcOffset) - 1, utcOffset: utcOffset)
        var oldest = yesterday
        for _ in 1..<Self.maxCatchUpDays {
            oldest = StatementDay(containing: oldest.start(utcOffset: utcOffset) - 1, utcOffset: utcOffset)
        }
        var day = max(StatementDay(payload)?.next ?? yesterday, oldest)
        var done = payload
        while day <= yesterday {
            if try await reconciler.reconcile(channel, day: day).status == .waiting {
                return (now.addingTimeInterval(Self.retryWhileWaiting), done)
            }
            done = day.description
            day = day.next
        }
        return (today.next.start(utcOffset: utcOffset).addingTimeInterval(TimeInterval(hour * 3600)), done)
    }
}
