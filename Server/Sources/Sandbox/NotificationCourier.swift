import Foundation

/// One notification a payment sandbox keeps until the merchant acknowledges it.
struct CourierNotice: Sendable {
    var id: String
    /// The `notify_url` of the request that made the trade. Both providers send a trade's notifications there and
    /// nowhere else, whatever came after: Alipay "will send asynchronous notifications" to the `notify_url` set "in
    /// the request" (https://global.alipay.com/help/online/91), WeChat Pay to the `notify_url` of the order's
    /// request (APIv3 `/v3/pay/transactions/app`, a required field of each order).
    var url: String
    var outTradeNo: String
    /// WeChat Pay's `event_type`; nil for Alipay.
    var eventType: String?
    /// What is sent beside the body (WeChat Pay's signature headers; none for Alipay, whose body is signed).
    var headers: [String: String] = [:]
    var body: [UInt8]
}

/// How a notice is sent: once, twice, held back until the next notice has been delivered, or after a delay
/// (what the sandboxes' notification faults do to it).
enum CourierRoute: Sendable, Equatable {
    case once
    case twice
    case heldBack
    case delayed(Duration)
}

/// One attempt to deliver a notification.
public struct NotificationDelivery: Sendable, Hashable {
    public var outTradeNo: String
    /// WeChat Pay's `event_type`; nil for Alipay.
    public var eventType: String?
    public var attempt: Int
    public var accepted: Bool
}

/// The notifications a payment sandbox has on their way: sent on the provider's retry schedule until the merchant
/// acknowledges them, kept until then (a restarted sandbox sends the ones left again), each to its own `notify_url`.
/// The Alipay and WeChat Pay sandboxes keep one each (``NotificationCourierHost``); what differs between them is the
/// schedule, the sink and how a notice left by an earlier process is sent again.
struct NotificationCourier: Sendable {
    /// Delivers one notice: (url, headers, body) → acknowledged.
    typealias Sink = @Sendable (_ url: String, _ headers: [String: String], _ body: [UInt8]) async -> Bool

    let retrySchedule: [Duration]
    /// Multiplies every retry delay (tests compress hours to milliseconds).
    let timeScale: Double
    var sink: Sink
    /// Notices not acknowledged yet, by id.
    fileprivate(set) var unacknowledged: [String: CourierNotice]
    /// The ones the process before this one left unacknowledged, until they are sent again.
    fileprivate var leftOver: [String]
    /// Notices held back (a reorder fault) until the next notice sent has been delivered.
    fileprivate var held: [CourierNotice] = []
    fileprivate var pending: [UUID: Task<Void, Never>] = [:]
    /// Every attempt so far, in the order they were answered.
    fileprivate(set) var deliveries: [NotificationDelivery] = []

    /// - Parameter unacknowledged: what the journal says was left unacknowledged by an earlier process.
    init(retrySchedule: [Duration], timeScale: Double, sink: @escaping Sink, unacknowledged: [CourierNotice] = []) {
        self.retrySchedule = retrySchedule
        self.timeScale = timeScale
        self.sink = sink
        self.unacknowledged = Dictionary(unacknowledged.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        leftOver = self.unacknowledged.keys.sorted()
    }

    /// The notices not acknowledged yet, in the order of their ids (what a compacted journal keeps).
    var waiting: [CourierNotice] { unacknowledged.keys.sorted().compactMap { unacknowledged[$0] } }
}

/// A sandbox that sends its notifications through a ``NotificationCourier`` it keeps, and writes down what the
/// merchant acknowledged.
protocol NotificationCourierHost: Actor {
    var courier: NotificationCourier { get set }
    /// The merchant acknowledged `id`: written down so that a restart does not send it again.
    func acknowledged(_ id: String)
    /// A notice an earlier process left unacknowledged, as it is sent again now (WeChat Pay signs it anew); nil:
    /// it cannot be sent.
    func resending(_ notice: CourierNotice) -> CourierNotice?
}

extension NotificationCourierHost {
    /// Sends a notice already kept in the journal, as `route` says; it is kept until acknowledged.
    func dispatch(_ notice: CourierNotice, route: CourierRoute) {
        courier.unacknowledged[notice.id] = notice
        if route == .heldBack {
            courier.held.append(notice)
            return
        }
        var delay = Duration.zero
        if case .delayed(let extra) = route { delay = extra }
        let current = deliver(notice, after: delay)
        if route == .twice { deliver(notice) }
        let held = courier.held
        courier.held = []
        // Reordered for certain: the held ones go only once the one that overtook them has been delivered.
        for notice in held { deliver(notice, following: current) }
    }

    /// Sends the notices held back by a reorder fault now, if nothing followed them.
    func releaseHeld() {
        let held = courier.held
        courier.held = []
        for notice in held { deliver(notice) }
    }

    /// Sends again, once, every notice the process before this one left unacknowledged, from the first attempt of
    /// the schedule (as the providers go on retrying whatever happened to the merchant's server).
    func resumeLeftOver() {
        let ids = courier.leftOver
        courier.leftOver = []
        for id in ids {
            guard let notice = courier.unacknowledged[id], let resent = resending(notice) else { continue }
            courier.unacknowledged[id] = resent
            deliver(resent)
        }
    }

    /// Waits until every scheduled notice has been delivered or given up.
    func settleDeliveries() async {
        while let (id, task) = courier.pending.first {
            await task.value
            courier.pending[id] = nil
        }
    }

    @discardableResult
    private func deliver(
        _ notice: CourierNotice, after delay: Duration = .zero, following predecessor: Task<Void, Never>? = nil
    ) -> Task<Void, Never> {
        let (sink, schedule, scale) = (courier.sink, courier.retrySchedule, courier.timeScale)
        let task = Task {
            await predecessor?.value
            if delay > .zero { try? await Task.sleep(for: delay) }
            for attempt in 0...schedule.count {
                if attempt > 0 { try? await Task.sleep(for: schedule[attempt - 1] * scale) }
                let accepted = await sink(notice.url, notice.headers, notice.body)
                self.answered(notice, attempt: attempt + 1, accepted: accepted)
                if accepted { return }
            }
        }
        courier.pending[UUID()] = task
        return task
    }

    private func answered(_ notice: CourierNotice, attempt: Int, accepted: Bool) {
        courier.deliveries.append(
            NotificationDelivery(
                outTradeNo: notice.outTradeNo, eventType: notice.eventType, attempt: attempt, accepted: accepted))
        guard accepted, courier.unacknowledged.removeValue(forKey: notice.id) != nil else { return }
        acknowledged(notice.id)
    }
}
