import AsyncHTTPClient
import ChannelSupport
import Foundation
import Logging
import NIOCore
import OrderSafeModel
import WeChatPay
import _CryptoExtras

/// A local WeChat Pay (API v3): verifies the merchant's `Authorization` on every call, keeps transactions,
/// answers the pay, query, close, refund, bill and `/v3/certificates` endpoints with signed responses, "pays" when
/// the app's invoke parameters are presented, and posts encrypted, signed notifications to `notify_url`,
/// retrying on anything but 2xx on WeChat Pay's schedule (time-compressible). Faults can be injected, and the
/// platform certificate rotated.
public actor SandboxWeChatPay: NotificationCourierHost {
    /// WeChat Pay's retry schedule after a notification is not acknowledged.
    public static let retrySchedule: [Duration] = [
        15, 15, 30, 180, 600, 1200, 1800, 1800, 1800, 3600, 10800, 10800, 10800, 21600, 21600,
    ]
    .map { .seconds($0) }

    /// How the sandbox signs: with a platform certificate's key (certificate mode) or a `PUB_KEY_ID_…` key.
    public enum Mode: Sendable, Hashable {
        case platformCertificate
        case publicKey(id: String)
    }

    /// One attempt to deliver a notification.
    public typealias Delivery = NotificationDelivery

    /// Delivers a notification: (url, headers, body) → acknowledged. Defaults to an HTTP POST.
    public typealias NotificationSink = @Sendable (String, [String: String], [UInt8]) async -> Bool

    public nonisolated let merchantID: String
    public nonisolated let appID: String
    public nonisolated let mode: Mode
    let merchantSerial: String
    let merchantPublicKey: _RSA.Signing.PublicKey
    let cipher: APIv3Cipher
    let clock: any WallClock
    private let logger: Logger

    var platforms: [PlatformIdentity]
    private let publicKeyIdentity: _RSA.Signing.PrivateKey
    var trades: [String: SandboxWeChatPayTrade] = [:]
    var serial: SandboxSerial
    private let journal: SandboxJournal<SandboxWeChatPayRecord>
    /// Notifications on their way, kept until acknowledged: sent again when the simulator starts again on its folder.
    var courier: NotificationCourier
    private var notificationFaults: [WeChatPayNotificationFault] = []
    var apiFaults: [WeChatPayAPIFault] = []

    /// Where bill download URLs point: the server's configured address (scheme, host and port).
    var downloadBase: String

    /// Bills are published at once, today's included (a tester's switch; WeChat Pay writes a day's bill the next
    /// morning).
    var billsAtOnce = false

    /// How long a payment stays unseen by queries (a fault; 0: none).
    var queryLag: TimeInterval = 0

    /// Every attempt to deliver a notification so far.
    public var deliveries: [Delivery] { courier.deliveries }

    /// - Parameters:
    ///   - platformKey: the key of the first platform certificate, and of the public key in public-key mode.
    ///   - merchantPublicKey: the merchant API key's public half, to verify `Authorization` and app signatures.
    ///   - timeScale: multiplies every retry delay (0.001 turns 15 seconds into 15 ms).
    ///   - folder: where the simulator keeps what it must not forget across restarts: its transactions and
    ///     unacknowledged notifications (``SandboxJournal``) and the numbers of the ids it handed out
    ///     (``SandboxSerial``); nil: nothing is kept, and ids are numbered from the clock.
    ///   - sink: where notifications go instead of their `notify_url` over HTTP (tests); nil: over HTTP.
    ///   - notifyTimeout: how long one notification attempt over HTTP may take before it counts as failed.
    public init(
        merchantID: String, appID: String, merchantSerial: String, merchantPublicKey: _RSA.Signing.PublicKey,
        apiV3Key: String,
        platformKey: _RSA.Signing.PrivateKey, mode: Mode = .platformCertificate, timeScale: Double = 1,
        clock: any WallClock = SystemClock(), folder: URL? = nil, sink: NotificationSink? = nil,
        notifyTimeout: Duration = .seconds(10), downloadBase: String = "http://127.0.0.1",
        logger: Logger = Logger(label: "sandbox.wechatpay")
    ) throws {
        self.downloadBase = downloadBase
        serial = try SandboxSerial(file: folder?.appendingPathComponent("wechatpay-id-counter"), clock: clock)
        var waiting: [CourierNotice] = []
        if let folder {
            let (journal, records) = try SandboxJournal<SandboxWeChatPayRecord>.open(
                folder.appendingPathComponent("wechatpay.journal"))
            self.journal = journal
            (trades, waiting) = SandboxWeChatPayRecord.replay(records)
            let held = SandboxWeChatPayRecord.holding(trades: trades, waiting: waiting)
            if held.count < records.count { try journal.compact(held) }
        } else {
            journal = .inMemory
        }
        self.merchantID = merchantID
        self.appID = appID
        self.mode = mode
        self.merchantSerial = merchantSerial
        self.merchantPublicKey = merchantPublicKey
        cipher = try APIv3Cipher(apiV3Key: apiV3Key)
        self.clock = clock
        courier = NotificationCourier(
            retrySchedule: Self.retrySchedule, timeScale: timeScale, sink: sink ?? Self.post(timeout: notifyTimeout),
            unacknowledged: waiting)
        self.logger = logger
        publicKeyIdentity = platformKey
        let first = try PlatformIdentity(
            key: platformKey, serialNumber: Array("OS-WXPAY-1".utf8), notBefore: clock.now() - 86400,
            lifetime: 5 * 365 * 86400)
        platforms = [first]
        firstCertificate = (first.serial, first.certificatePEM)
    }

    /// The platform certificate the sandbox starts with (serial, PEM): what WeChat Pay's certificate download tool
    /// (`CertificateDownloader`) saves for a merchant before its SDK first runs in certificate mode.
    public nonisolated let firstCertificate: (serial: String, pem: String)

    /// The public key merchants configure in public-key mode, PEM.
    public nonisolated var publicKeyPEM: String { publicKeyIdentity.publicKey.pemRepresentation }

    /// The serial WeChat Pay currently signs with.
    public var signingSerial: String {
        if case .publicKey(let id) = mode { return id }
        return platforms.last!.serial
    }

    /// The current platform certificates, PEM by serial (what `/v3/certificates` serves, decrypted).
    public var platformCertificates: [String: String] {
        Dictionary(uniqueKeysWithValues: platforms.map { ($0.serial, $0.certificatePEM) })
    }

    // MARK: Fault injection

    public func injectNotificationFault(_ fault: WeChatPayNotificationFault) {
        notificationFaults.append(fault)
    }

    public func injectAPIFault(_ fault: WeChatPayAPIFault, count: Int = 1) {
        apiFaults.append(contentsOf: repeatElement(fault, count: count))
    }

    /// Issues a new platform certificate and signs with it from now on; the old one stays listed (and valid)
    /// while merchants catch up, as during WeChat Pay's rotations.
    @discardableResult
    public func rotatePlatformCertificate() throws -> String {
        let number = platforms.count + 1
        platforms.append(
            try PlatformIdentity(
                key: try _RSA.Signing.PrivateKey(keySize: .bits2048), serialNumber: Array("OS-WXPAY-\(number)".utf8),
                notBefore: clock.now() - 60, lifetime: 5 * 365 * 86400))
        return platforms.last!.serial
    }

    // MARK: The app side

    /// What the WeChat app does with the invoke parameters: checks the merchant's signature over
    /// `appid\ntimestamp\nnoncestr\nprepayid\n`, then (when `pay`) pays. Returns the `out_trade_no`.
    @discardableResult
    public func open(_ invocation: WeChatPayInvocation, pay: Bool = true) throws -> String {
        guard invocation.appid == appID, invocation.partnerid == merchantID, invocation.package == "Sign=WXPay" else {
            throw SandboxWeChatPayError.invalidRequest("appid, partnerid or package do not match")
        }
        let message = "\(invocation.appid)\n\(invocation.timestamp)\n\(invocation.noncestr)\n\(invocation.prepayid)\n"
        guard SHA256WithRSA.verify(invocation.sign, over: Array(message.utf8), with: merchantPublicKey) else {
            throw SandboxWeChatPayError.invalidSignature
        }
        guard let trade = trades.values.first(where: { $0.prepayID == invocation.prepayid }) else {
            throw SandboxWeChatPayError.invalidRequest("unknown prepayid")
        }
        if pay { try self.pay(outTradeNo: trade.outTradeNo) }
        return trade.outTradeNo
    }

    /// The buyer confirms: the transaction becomes SUCCESS and its notification is scheduled.
    public func pay(outTradeNo: String) throws {
        guard var trade = trades[outTradeNo] else { throw SandboxWeChatPayError.unknownTrade(outTradeNo) }
        guard trade.state != .closed else { throw SandboxWeChatPayError.invalidRequest("the order is closed") }
        guard trade.state == .notPay else { return }
        trade.state = .success
        trade.successTime = RFC3339Beijing.string(clock.now())
        try keep(
            trade,
            notifying: notification(
                url: trade.notifyURL, eventType: "TRANSACTION.SUCCESS", summary: "支付成功", originalType: "transaction",
                resource: Self.transactionJSON(trade, merchantID: merchantID)))
    }

    /// Sends notifications somewhere other than over HTTP (tests drive the server in process).
    public func setNotificationSink(_ sink: @escaping NotificationSink) {
        courier.sink = sink
    }

    /// Every paid transaction: the simulator's own record.
    public var payments: [SandboxPaymentRecord] {
        trades.values.filter { $0.state.isPaid }.map {
            SandboxPaymentRecord(
                providerTransactionID: $0.transactionID, orderReference: $0.outTradeNo, amount: $0.amount)
        }
    }

    /// A transaction's state, for tests and the demo.
    public func state(outTradeNo: String) -> WeChatPayTradeState? { trades[outTradeNo]?.state }

    /// Every paid transaction (`out_trade_no` → amount): the sandbox's own record, for invariant checks.
    public var paidTransactions: [String: Money] {
        trades.values.filter { $0.state.isPaid }.reduce(into: [:]) { $0[$1.outTradeNo] = $1.amount }
    }

    /// Waits until every scheduled notification has been delivered or given up.
    public func settle() async {
        await settleDeliveries()
    }

    // MARK: Notifications

    /// A transaction as it is now, kept (in memory and in the journal) before anyone hears of it, with the notification
    /// its change sends in the same record, then sent: never paid without its notification on its way.
    func keep(_ trade: SandboxWeChatPayTrade, notifying outgoing: Outgoing? = nil) throws {
        try journal.append(.trade(trade, notification: outgoing?.notice))
        trades[trade.outTradeNo] = trade
        if let outgoing {
            dispatch(
                outgoing.notice.courierNotice(about: trade.outTradeNo, headers: outgoing.headers), route: outgoing.route
            )
        }
        compactIfDue()
    }

    /// Compacts the journal to what is held now once it has grown enough (see ``SandboxJournal``).
    private func compactIfDue() {
        journal.compactIfDue(
            { SandboxWeChatPayRecord.holding(trades: trades, waiting: courier.waiting) }, sandbox: "wechatpay",
            logger: logger)
    }

    /// Sends again, once, every notification the merchant had not acknowledged when the simulator last stopped,
    /// signed anew (as WeChat Pay goes on retrying whatever happened to the merchant's server).
    public func resumeNotifications() {
        resumeLeftOver()
    }

    /// A notice left by an earlier process, its headers signed now.
    func resending(_ notice: CourierNotice) -> CourierNotice? {
        let timestamp = Int64(clock.now().timeIntervalSince1970)
        guard let headers = try? signatureHeaders(body: notice.body, timestamp: timestamp, platform: signingPlatform)
        else { return nil }
        var resent = notice
        resent.headers = headers
        return resent
    }

    func acknowledged(_ id: String) {
        journal.acknowledge(
            id, holding: { SandboxWeChatPayRecord.holding(trades: trades, waiting: courier.waiting) },
            sandbox: "wechatpay",
            logger: logger)
    }

    /// A notification about to go out, signed, and how the next injected fault sends it.
    struct Outgoing {
        var notice: SandboxNotice
        var headers: [String: String]
        var route: CourierRoute
    }

    /// The signed, encrypted notification of `resource`; nil when a fault drops it.
    func notification(url: String, eventType: String, summary: String, originalType: String, resource: String)
        -> Outgoing?
    {
        let nonce = Self.nonce()
        guard let ciphertext = try? cipher.encrypt(Array(resource.utf8), nonce: nonce, associatedData: originalType)
        else { return nil }
        let id = UUID().uuidString
        let body =
            #"{"id":"\#(id)","create_time":"\#(RFC3339Beijing.string(clock.now()))","resource_type":"encrypt-resource","event_type":"\#(eventType)","summary":"\#(summary)","resource":{"original_type":"\#(originalType)","algorithm":"AEAD_AES_256_GCM","ciphertext":"\#(ciphertext)","associated_data":"\#(originalType)","nonce":"\#(nonce)"}}"#
        let fault = notificationFaults.isEmpty ? nil : notificationFaults.removeFirst()
        let timestamp = Int64(clock.now().timeIntervalSince1970) - (fault == .staleTimestamp ? 600 : 0)
        guard
            let headers = try? signatureHeaders(body: Array(body.utf8), timestamp: timestamp, platform: signingPlatform)
        else { return nil }
        var route = CourierRoute.once
        switch fault {
        case .drop:
            return nil
        case .delay(let delay):
            route = .delayed(delay)
        case .reorder:
            route = .heldBack
        case .duplicate:
            route = .twice
        case .staleTimestamp, nil:
            break
        }
        return Outgoing(
            notice: SandboxNotice(id: id, url: url, body: body, eventType: eventType), headers: headers, route: route)
    }

    /// Sends the held-back notifications of a `.reorder` fault now, if nothing followed them.
    public func releaseHeldNotification() {
        releaseHeld()
    }

    /// POSTs each notification, each attempt ending after `timeout`; acknowledged on any 2xx.
    static func post(timeout: Duration) -> NotificationSink {
        { url, headers, body in
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            guard let response = try? await HTTPClient.notifications.execute(request, timeout: .init(timeout)) else {
                return false
            }
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(response.status.code)
        }
    }

    // MARK: Signing

    private var signingPlatform: PlatformIdentity? {
        if case .publicKey = mode { return nil }
        return platforms.last!
    }

    func signed(_ status: Int, _ json: String, platform: PlatformIdentity? = nil) -> ProviderHTTPResponse {
        let body = Array(json.utf8)
        var headers =
            (try? signatureHeaders(
                body: body, timestamp: Int64(clock.now().timeIntervalSince1970), platform: platform ?? signingPlatform))
            ?? [:]
        headers["Content-Type"] = "application/json; charset=utf-8"
        headers["Request-ID"] = UUID().uuidString
        return ProviderHTTPResponse(status: status, headers: headers, body: body)
    }

    /// Signs with `platform`'s key, or with the public-key-mode key when nil.
    private func signatureHeaders(body: [UInt8], timestamp: Int64, platform: PlatformIdentity?) throws -> [String:
        String]
    {
        let signer = WeChatPaySideSigner(
            platformKey: platform?.key ?? publicKeyIdentity, serial: platform?.serial ?? signingSerial)
        return try signer.headers(
            body: String(decoding: body, as: UTF8.self), timestamp: timestamp, nonce: Self.nonce())
    }

    // MARK: Helpers

    static func transactionJSON(_ trade: SandboxWeChatPayTrade, merchantID: String) -> String {
        var members = [
            "\"appid\":\(JSONString.encode(trade.appID))", "\"mchid\":\(JSONString.encode(merchantID))",
            "\"out_trade_no\":\(JSONString.encode(trade.outTradeNo))", "\"trade_type\":\"APP\"",
            "\"trade_state\":\"\(trade.state.rawValue)\"",
            "\"trade_state_desc\":\(JSONString.encode(trade.state == .success ? "支付成功" : trade.state.rawValue))",
            "\"amount\":{\"total\":\(trade.amount.amountMinor),\"payer_total\":\(trade.amount.amountMinor),\"currency\":\"\(trade.amount.currency.code)\",\"payer_currency\":\"\(trade.amount.currency.code)\"}",
        ]
        if trade.state.isPaid {
            members.append("\"transaction_id\":\(JSONString.encode(trade.transactionID))")
            members.append("\"success_time\":\(JSONString.encode(trade.successTime ?? ""))")
            members.append("\"bank_type\":\"OTHERS\"")
            members.append("\"payer\":{\"openid\":\"oSandbox\(trade.transactionID.suffix(8))\"}")
        }
        if let attach = trade.attach { members.append("\"attach\":\(JSONString.encode(attach))") }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func refundJSON(
        _ trade: SandboxWeChatPayTrade, outRefundNo: String, statusKey: String, merchantID: String? = nil
    ) -> String {
        let refund = trade.refunds[outRefundNo]!
        var members = [
            "\"out_trade_no\":\(JSONString.encode(trade.outTradeNo))",
            "\"transaction_id\":\(JSONString.encode(trade.transactionID))",
            "\"out_refund_no\":\(JSONString.encode(outRefundNo))",
            "\"refund_id\":\(JSONString.encode(refund.refundID))",
            "\"\(statusKey)\":\"SUCCESS\"", "\"channel\":\"ORIGINAL\"", "\"user_received_account\":\"支付用户零钱\"",
            "\"amount\":{\"total\":\(trade.amount.amountMinor),\"refund\":\(refund.fen),\"payer_total\":\(trade.amount.amountMinor),\"payer_refund\":\(refund.fen),\"currency\":\"\(trade.amount.currency.code)\"}",
        ]
        if let merchantID { members.append("\"mchid\":\(JSONString.encode(merchantID))") }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func error(_ code: String, _ message: String) -> String {
        "{\"code\":\(JSONString.encode(code)),\"message\":\(JSONString.encode(message))}"
    }

    static func object(_ body: [UInt8]) throws -> JSONObject {
        do {
            return try JSONObject(body)
        } catch {
            throw SandboxWeChatPayError.invalidRequest("the body is not a JSON object")
        }
    }

    static func read<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw SandboxWeChatPayError.invalidRequest("\(error)")
        }
    }

    static func day(_ date: Date) -> String { String(RFC3339Beijing.string(date).prefix(10).filter(\.isNumber)) }

    static func nonce() -> String { WeChatPayNonce.random() }
}

/// Why the sandbox refused a request (answered with WeChat Pay's error JSON and status).
public enum SandboxWeChatPayError: Error, CustomStringConvertible {
    case invalidRequest(String)
    case unauthorized(String)
    case invalidSignature
    case unknownTrade(String)
    case outTradeNoUsed

    var status: Int {
        switch self {
        case .invalidRequest, .outTradeNoUsed: 400
        case .unauthorized, .invalidSignature: 401
        case .unknownTrade: 404
        }
    }

    var code: String {
        switch self {
        case .invalidRequest: "PARAM_ERROR"
        case .unauthorized, .invalidSignature: "SIGN_ERROR"
        case .unknownTrade: "ORDER_NOT_EXIST"
        case .outTradeNoUsed: "OUT_TRADE_NO_USED"
        }
    }

    public var description: String {
        switch self {
        case .invalidRequest(let detail): "invalid request: \(detail)"
        case .unauthorized(let detail): "unauthorized: \(detail)"
        case .invalidSignature: "the app signature does not verify with the merchant key"
        case .unknownTrade(let outTradeNo): "no transaction \(outTradeNo)"
        case .outTradeNoUsed: "out_trade_no was used with other parameters"
        }
    }
}
