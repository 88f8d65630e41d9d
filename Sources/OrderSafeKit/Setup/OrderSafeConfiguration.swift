import Foundation

/// Everything OrderSafeKit needs at launch.
public struct OrderSafeConfiguration: Sendable {
    /// The OrderSafe server, e.g. `https://pay.example.com/`.
    public var serverURL: URL
    /// The signed-in user's bearer token, asked for before every call (so a refreshed token is used at once).
    /// Throwing means "signed out": nothing is sent, purchases on their way wait.
    public var token: @Sendable () async throws -> String
    /// Asked when the server refuses the token ``token`` gave (401, an expired token), with that token: return a fresh
    /// one (and have ``token`` give it from now on); the refused call is sent once more with it. Asked once per refused
    /// token, however many calls were refused with it. Nil, or throwing: the call is refused; a purchase already
    /// charged waits in the journal and is asked again later, never told "failed".
    public var refreshToken: (@Sendable (_ refused: String) async throws -> String)?
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
    /// Waits between polls, in seconds; tests pass one that does not sleep.
    public var sleep: @Sendable (TimeInterval) async throws -> Void
    /// Now; tests pin it.
    public var now: @Sendable () -> Date
    /// Where OrderSafe hears that the app became active again (``AppActivations/system`` unless told; ``AppActivations/none``
    /// opts out, and the app calls ``OrderSafe/appBecameActive()`` itself).
    public var activations: AppActivations

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
        sleep = { try await Task.sleep(seconds: $0) }
        now = { Date() }
        activations = .system
    }
}

/// Waiting for an Alipay or WeChat Pay payment: at most `providerAnswer` for the payment app's answer (then the
/// server is asked as if the buyer came back without one), then polling the server for the truth with exponential
/// backoff from `firstDelay` up to `maxDelay`, for at most `timeout`; after that the order stays in the journal and
/// is asked about again at the next ``OrderSafe/resume()``. So ``OrderSafe/purchase(_:through:confirmIn:)`` returns within
/// `providerAnswer + timeout` (six minutes by default) plus the server's answering time. Every wait is in seconds
/// (`TimeInterval`: `Duration` needs iOS 16, and OrderSafeKit runs from iOS 15).
public struct ConfirmationPolicy: Sendable, Hashable {
    public var firstDelay: TimeInterval
    public var maxDelay: TimeInterval
    public var timeout: TimeInterval
    /// The longest a buyer may stay in the payment app (entering a password, topping up a balance) before OrderSafe
    /// stops waiting for its answer.
    public var providerAnswer: TimeInterval
    /// How long an App Store order whose purchase ended in an error that may have followed the charge is kept for
    /// its transaction before a resume gives it up. Giving up loses nothing: a transaction that comes later is
    /// recorded all the same (the server adopts it for its buyer); it only ends the wait the buyer sees.
    public var storeMayStillDeliver: TimeInterval
    /// The longest wait before a transaction the server did not record (rejected, or held because its settings
    /// cannot verify it) is submitted again; the wait starts at 30 s and doubles up to this.
    public var notRecordedRetryCap: TimeInterval

    public init(
        firstDelay: TimeInterval = 0.3, maxDelay: TimeInterval = 5, timeout: TimeInterval = 60,
        providerAnswer: TimeInterval = 300, storeMayStillDeliver: TimeInterval = 600,
        notRecordedRetryCap: TimeInterval = 6 * 3600
    ) {
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
        self.timeout = timeout
        self.providerAnswer = providerAnswer
        self.storeMayStillDeliver = storeMayStillDeliver
        self.notRecordedRetryCap = notRecordedRetryCap
    }

    /// The waits between polls, in order, adding up to no more than `timeout`; each at least a millisecond, and at
    /// most ``maxPolls`` of them whatever the policy says (an infinite timeout, a zero `maxDelay`).
    var delays: [TimeInterval] {
        var delays: [TimeInterval] = []
        var total: TimeInterval = 0
        var next = Self.atLeastAMillisecond(firstDelay)
        while total + next <= timeout, delays.count < Self.maxPolls {
            delays.append(next)
            total += next
            next = Self.atLeastAMillisecond(min(next * 2, maxDelay))
        }
        return delays
    }

    /// The most polls one wait makes.
    static let maxPolls = 10_000

    private static func atLeastAMillisecond(_ seconds: TimeInterval) -> TimeInterval {
        seconds.isNaN ? 0.001 : max(seconds, 0.001)
    }
}

/// One diagnostic line: what happened and identifiers that are safe to log (order numbers, transaction ids).
public struct OrderSafeLogRecord: Sendable, Hashable {
    public enum Level: String, Sendable { case debug, info, warning, error }
    public var level: Level
    public var message: String
    public var metadata: [String: String]
}
