import Foundation
import OrderSafeModel

/// How fast the sandbox App Store's subscriptions run. Apple's sandbox renews a monthly subscription every five
/// minutes unless the tester picks another rate: a week in 3 minutes, a month in 5, two in 10, three in 15, six in
/// 30, a year in an hour, with the billing grace and retry periods scaled alike (StoreKit Test's
/// `monthlyRenewalEveryFiveMinutes`, which "the sandbox environment also supports":
/// https://developer.apple.com/documentation/storekittest/sktestsession/timerate-swift.enum/monthlyrenewaleveryfiveminutes).
public enum SandboxRenewalRate: String, Sendable, Hashable, CaseIterable {
    /// Periods as long as in production (a month is a calendar month).
    case realTime = "real_time"
    /// Apple's sandbox default: a month in five minutes.
    case monthlyEveryFiveMinutes = "monthly_every_5_minutes"

    /// Where a period of `period` that starts at `start` ends.
    public func end(of period: GrantPeriod, from start: Date) -> Date {
        switch self {
        case .realTime: return period.adding(to: start)
        case .monthlyEveryFiveMinutes:
            let seconds: Int =
                switch period.unit {
                case .day: 10  // Apple's table has no daily periods: a day as long as 30 of them make a month
                case .week: 180
                case .month: 300
                case .year: 3600
                }
            return start.addingTimeInterval(TimeInterval(seconds) * TimeInterval(period.count))
        }
    }

    /// How long `days` days of grace, billing retry or extension last at this rate (30 days scale as a month does;
    /// Apple rounds a scaled extension down to whole minutes, which this does not).
    public func duration(days: Int) -> TimeInterval {
        switch self {
        case .realTime: TimeInterval(days) * 86400
        case .monthlyEveryFiveMinutes: TimeInterval(days) * 10
        }
    }
}
