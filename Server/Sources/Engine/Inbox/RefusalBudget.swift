import Foundation
import Synchronization

/// What one user's refused requests may make the inbox keep: at most ``bytesPerHour`` a clock hour, in this process
/// (each replica its own). Past it a refused request is answered as before but not kept. The users tracked are bounded
/// too: past ``maxUsers`` in an hour, a new user's refusals are not kept either (they are forensics, not evidence).
final class RefusalBudget: Sendable {
    private struct Hour {
        var number: Int64 = .min
        var spent: [String: Int] = [:]
    }

    let bytesPerHour: Int
    let maxUsers: Int
    private let hour = Mutex(Hour())

    init(bytesPerHour: Int = 64 << 10, maxUsers: Int = 100_000) {
        self.bytesPerHour = bytesPerHour
        self.maxUsers = maxUsers
    }

    /// Takes `bytes` from `user`'s budget for the hour of `now`; false (nothing taken) when they do not fit.
    func spend(_ bytes: Int, user: String, now: Date) -> Bool {
        let number = Int64((now.timeIntervalSince1970 / 3600).rounded(.down))
        return hour.withLock { hour in
            if hour.number != number { hour = Hour(number: number) }
            let spent = hour.spent[user] ?? 0
            guard spent + bytes <= bytesPerHour, hour.spent[user] != nil || hour.spent.count < maxUsers else {
                return false
            }
            hour.spent[user] = spent + bytes
            return true
        }
    }
}
