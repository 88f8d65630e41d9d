import Foundation
import Ledger
import Logging
@_spi(OrderSafeServer) import OrderSafeModel

/// The App Store's notification history, pulled every hour through the App Store Server API (a chore the job
/// runner runs): what the App Store sent and never delivered is processed as if it had been posted.
struct AppStoreHistoryPull: ChannelChore {
    let payments: AppStorePayments
    let logger: Logger

    var kind: JobKind { .appStoreHistory }
    var key: String { "appstore" }

    static let interval: TimeInterval = 3600

    /// Where a pull starts: ten minutes before the last one ended (the App Store dates a notification when it is
    /// first sent, so each lands in some window), a day back the first time, at most thirty days back.
    static func start(after lastEnd: Date?, now: Date) -> Date {
        guard let lastEnd else { return now.addingTimeInterval(-86400) }
        return max(lastEnd.addingTimeInterval(-600), now.addingTimeInterval(-30 * 86400))
    }

    /// `payload`: when the last pull ended, in milliseconds since 1970.
    func run(payload: String, now: Date) async throws -> (next: Date, payload: String) {
        let start = Self.start(after: Int64(payload).map(Date.init(millisecondsSince1970:)), now: now)
        let pulled = try await payments.pullNotificationHistory(from: start, to: now)
        logger.info(
            "app store notification history pulled", metadata: ["notifications": "\(pulled)", "since": "\(start)"])
        return (now.addingTimeInterval(Self.interval), String(now.millisecondsSince1970))
    }
}

/// The App Store history of a subscription chain that just gained its first owner, pulled by a job once its purchase
/// was answered (the periods nobody brought: the original purchase, renewals whose notifications never came), so
/// the answer never waits for Apple's Server API.
struct AppStoreChainHistory: ChannelTask {
    let payments: AppStorePayments

    var kind: JobKind { .appStoreChainHistory }

    /// `key`: a transaction of the chain; `payload`: its owner.
    func run(key: String, payload: String) async throws {
        _ = try await payments.followHistory(of: key, submitter: payload)
    }
}

extension AppStorePayments {
    /// What the reconciler runs on a schedule for the App Store: the history pull, when the Server API is configured.
    public var chores: [any ChannelChore] {
        api == nil ? [] : [AppStoreHistoryPull(payments: self, logger: context.logger)]
    }

    /// What the App Store queues for the job runner: new chains' histories, when the Server API is configured.
    public var tasks: [any ChannelTask] {
        api == nil ? [] : [AppStoreChainHistory(payments: self)]
    }
}
