import Foundation
import Synchronization

/// What a statement day's listing has asked a provider so far, kept when the listing stops midway (a refused key, a
/// timeout, an outage) so that the next attempt asks only the rest: each answer by what was asked, per day, for the
/// last ``daysKept`` days, in this process (a restarted server asks the day again from its start).
final class StatementDayProgress<Answer: Sendable>: Sendable {
    private let days = Mutex<[StatementDay: [String: Answer]]>([:])

    /// The days whose progress is kept at most: the reconciler's catch-up window, and no more.
    static var daysKept: Int { 7 }

    /// The answers `day`'s listing got so far, by what was asked.
    func answers(of day: StatementDay) -> [String: Answer] {
        days.withLock { $0[day] ?? [:] }
    }

    /// Keeps `answer` to `question` for `day`; the oldest day's progress goes when more than ``daysKept`` are kept.
    func keep(_ answer: Answer, to question: String, of day: StatementDay) {
        days.withLock { days in
            days[day, default: [:]][question] = answer
            while days.count > Self.daysKept, let oldest = days.keys.min() { days[oldest] = nil }
        }
    }

    /// `day` was listed whole: nothing of it is kept any longer.
    func forget(_ day: StatementDay) {
        _ = days.withLock { $0.removeValue(forKey: day) }
    }
}
