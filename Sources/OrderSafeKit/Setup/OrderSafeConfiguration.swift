import Foundation

/// Everything OrderSafeKit needs at launch.
public struct OrderSafeConfiguration: Sendable {
    /// The OrderSafe server, e.g. `https://pay.example.com/`.
    public var serverURL: URL
    /// The signed-in user's bearer token, asked for before every call (so a refreshed token is used at once).
    /// Throwing means "signed out": nothing is sent, purchases on their way wait.
    public var token: @Sendable () async throws -> String
    /// The user signed in at launch, whose token ``token`` gives; nil: nobody yet (``OrderSafe/logIn(_:)`` later).
    public var userID: String?
    /// A folder of the app's own for the purchase journal (Application Support is right on iOS).
    public var journalDirectory: URL
    public var alipay: (any AlipayBridge)?
    public var wechatPay: (any WeChatPayBridge)?
    /// How long, and how often, to ask the server whether an Alipay or WeChat Pay order is paid.
    public var confirmation: ConfirmationPolicy
    /// Diagnostics (never tokens, receipts or signed transactions): route them to `os.Logger` or swift-log.
    public var log: (@Sendable (OrderSafeLogRecord) -> Void)?
    /// Waits between polls; tests pass one that does not sleep.
    public var sleep: @Sendable (Duration) async throws -> Void
    /// Now; tests pin it.
    public var now: @Sendable () -> Date

    public init(
        serverURL: URL, token: @escaping @Sendable () async throws -> String, userID: String?, journalDirectory: URL,
        alipay: (any AlipayBridge)? = nil,
        wechatPay: (any WeChatPayBridge)? = nil, confirmation: ConfirmationPolicy = ConfirmationPolicy(),
        log: (@Sendable (OrderSafeLogRecord) -> Void)? = nil
    ) {
        self.serverURL = serverURL
        self.token = token
        self.userID = userID
        self.journalDirectory = journalDirectory
        self.alipay = alipay
        self.wechatPay = wechatPay
        self.confirmation = confirmation
        self.log = log
        sleep = { try await Task.sleep(for: $0) }
        now = { Date() }
    }
}

/// Waiting for an Alipay or WeChat Pay payment: at most `providerAnswer` for the payment app's answer (then the
/// server is asked as if the buyer came back without one), then polling the server for the truth with exponential
/// backoff from `firstDelay` up to `maxDelay`, for at most `timeout`; after that the order stays in the journal and
/// is asked about again at the next ``OrderSafe/resume()``. So ``OrderSafe/purchase(_:through:)`` returns within
/// `providerAnswer + timeout` (six minutes by default) plus the server's answering time.
public struct ConfirmationPolicy: Sendable, Hashable {
    public var firstDelay: Duration
    public var maxDelay: Duration
    public var timeout: Duration
    /// The longest a buyer may stay in the payment app (entering a password, topping up a balance) before OrderSafe
    /// stops waiting for its answer.
    public var providerAnswer: Duration
    /// How long an App Store order whose purchase ended in an error that may have followed the charge is kept for
    /// its transaction before a resume gives it up. Giving up loses nothing: a transaction that comes later is
    /// recorded all the same (the server adopts it for its buyer); it only ends the wait the buyer sees.
    public var storeMayStillDeliver: Duration
    /// The longest wait before a transaction the server did not record (rejected, or held because its settings
    /// cannot verify it) is submitted again; the wait starts at 30 s and doubles up to this.
    public var notRecordedRetryCap: Duration

    public init(
        firstDelay: Duration = .milliseconds(300), maxDelay: Duration = .seconds(5), timeout: Duration = .seconds(60),
        providerAnswer: Duration = .seconds(300), storeMayStillDeliver: Duration = .seconds(600),
        notRecordedRetryCap: Duration = .seconds(6 * 3600)
    ) {
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
        self.timeout = timeout
        self.providerAnswer = providerAnswer
        self.storeMayStillDeliver = storeMayStillDeliver
        self.notRecordedRetryCap = notRecordedRetryCap
    }

    /// The waits between polls, in order, adding up to no more than `timeout`.
    var delays: [Duration] {
        var delays: [Duration] = []
        var total = Duration.zero
        var next = max(firstDelay, .milliseconds(1))
        while total + next <= timeout {
            delays.append(next)
            total += next
            next = min(next * 2, maxDelay)
        }
        return delays
    }
}

/// One diagnostic line: what happened and identifiers that are safe to log (order numbers, transaction ids).
public struct OrderSafeLogRecord: Sendable, Hashable {
    public enum Level: String, Sendable { case debug, info, warning, error }
    public var level: Level
    public var message: String
    public var metadata: [String: String]
}

extension Duration {
    /// The duration in seconds, for `Date` arithmetic.
    var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
