import Alipay
import AsyncHTTPClient
import ChannelSupport
import Foundation
import Logging
import NIOCore
import OrderSafeModel
import _CryptoExtras

/// A local Alipay: verifies the merchant's signed requests, keeps trades, answers the gateway methods with
/// Alipay's response format and RSA2 signatures, "pays" when told, and posts signed notifications to `notify_url`,
/// retrying on anything but `success` on Alipay's schedule (time-compressible). Faults can be injected.
public actor SandboxAlipay: NotificationCourierHost {
    /// Alipay's retry schedule after a notification is not answered `success`.
    public static let retrySchedule: [Duration] = [
        .seconds(4 * 60), .seconds(10 * 60), .seconds(10 * 60), .seconds(3600), .seconds(7200), .seconds(6 * 3600),
        .seconds(15 * 3600),
    ]

    /// One attempt to deliver a notification.
    public typealias Delivery = NotificationDelivery

    public nonisolated let appID: String
    public nonisolated let sellerID = "2088000000000001"
    public nonisolated let signer: AlipaySideSigner
    private let appPublicKey: _RSA.Signing.PublicKey
    let clock: any WallClock
    private let logger: Logger

    private(set) var trades: [String: SandboxAlipayTrade] = [:]
    private var serial: SandboxSerial
    private let journal: SandboxJournal<SandboxAlipayRecord>
    /// Notifications on their way, kept until acknowledged: sent again when the simulator starts again on its folder.
    var courier: NotificationCourier
    private var notificationFaults: [AlipayNotificationFault] = []
    private var gatewayFaults: [AlipayGatewayFault] = []
    private var shortensNextRefund = false
    /// How long a payment stays unseen by queries (a fault; 0: none): see ``setQueryLag(_:)``.
    var queryLag: TimeInterval = 0
    /// Bills are published at once, today's included (a tester's switch): see ``publishBillsAtOnce(_:)``.
    var billsAtOnce = false
    /// Where bill download URLs point: the routes' prefix at the server's configured address (never a request's
    /// `Host`, which any caller writes).
    private(set) var downloadBase: String
    /// Every attempt to deliver a notification so far.
    public var deliveries: [Delivery] { courier.deliveries }

    /// - Parameters:
    ///   - alipayKey: the simulator's own key pair (Alipay's side).
    ///   - appPublicKey: the merchant's app public key, to verify its requests.
    ///   - timeScale: multiplies every retry delay (0.0001 turns Alipay's 4 minutes into 24 ms).
    ///   - folder: where the simulator keeps what it must not forget across restarts: its trades and unacknowledged
    ///     notifications (``SandboxJournal``) and the numbers of the `trade_no`s it handed out (``SandboxSerial``);
    ///     nil: nothing is kept, and ids are numbered from the clock.
    ///   - notifyTimeout: how long one notification attempt may take before it counts as failed.
    public init(
        appID: String, alipayKey: _RSA.Signing.PrivateKey, appPublicKey: _RSA.Signing.PublicKey, timeScale: Double = 1,
        clock: any WallClock = SystemClock(), folder: URL? = nil, httpClient: HTTPClient = .notifications,
        notifyTimeout: Duration = .seconds(10), downloadBase: String = "http://127.0.0.1/sandbox/alipay/",
        logger: Logger = Logger(label: "sandbox.alipay")
    ) throws {
        self.downloadBase = downloadBase
        serial = try SandboxSerial(file: folder?.appendingPathComponent("alipay-id-counter"), clock: clock)
        var waiting: [CourierNotice] = []
        if let folder {
            let (journal, records) = try SandboxJournal<SandboxAlipayRecord>.open(
                folder.appendingPathComponent("alipay.journal"))
            self.journal = journal
            (trades, waiting) = SandboxAlipayRecord.replay(records)
            let held = SandboxAlipayRecord.holding(trades: trades, waiting: waiting)
            if held.count < records.count { try journal.compact(held) }
        } else {
            journal = .inMemory
        }
        self.appID = appID
        signer = AlipaySideSigner(privateKey: alipayKey)
        self.appPublicKey = appPublicKey
        self.clock = clock
        courier = NotificationCourier(
            retrySchedule: Self.retrySchedule, timeScale: timeScale,
            sink: { url, _, body in
                await Self.post(url: url, body: body, client: httpClient, timeout: notifyTimeout)
            },
            unacknowledged: waiting)
        self.logger = logger
    }

    /// Delivers one notification; true when the merchant acknowledged it (answered exactly `success`).
    public typealias NotificationSink = @Sendable (_ url: String, _ body: String) async -> Bool

    /// Sends notifications somewhere other than over HTTP (tests drive the server in process).
    public func setNotificationSink(_ sink: @escaping NotificationSink) {
        courier.sink = { url, _, body in await sink(url, String(decoding: body, as: UTF8.self)) }
    }

    /// Every paid trade: the simulator's own record.
    public var payments: [SandboxPaymentRecord] {
        trades.values.filter { $0.status.isPaid }.map {
            SandboxPaymentRecord(
                providerTransactionID: $0.tradeNo, orderReference: $0.outTradeNo,
                amount: Money(amountMinor: $0.totalFen, currency: .cny))
        }
    }

    // MARK: Fault injection

    /// The next notification is sent with `fault` applied.
    public func injectNotificationFault(_ fault: AlipayNotificationFault) {
        notificationFaults.append(fault)
    }

    /// The next `count` gateway calls fail with `fault`.
    public func injectGatewayFault(_ fault: AlipayGatewayFault, count: Int = 1) {
        gatewayFaults.append(contentsOf: repeatElement(fault, count: count))
    }

    /// From now on, `alipay.trade.query` answers a payment younger than `seconds` as `WAIT_BUYER_PAY` (the buyer
    /// still paying), so that only its notification, or the day's bill, shows it was paid (0 ends the lag). Bills and
    /// refunds are not affected.
    public func setQueryLag(_ seconds: TimeInterval) {
        queryLag = seconds
    }

    /// Points bill download URLs at `base` (ending in `/`, where `downloadBillFile.resource` is served).
    public func setDownloadBase(_ base: String) {
        downloadBase = base
    }

    /// Publishes each day's bill at once, today's so far included (for a run on real time that ends by checking its
    /// statements), or as Alipay does again.
    public func publishBillsAtOnce(_ atOnce: Bool) {
        billsAtOnce = atOnce
    }

    /// Faults still waiting for a notification or a gateway call.
    public var pendingFaults: (notifications: [AlipayNotificationFault], gateway: [AlipayGatewayFault]) {
        (notificationFaults, gatewayFaults)
    }

    // MARK: The app side

    /// What the Alipay app does with an order string: verifies the merchant's signature, opens the trade, and
    /// (when `pay` is true, as after the user confirms) pays it. Returns the trade number.
    @discardableResult
    public func open(orderString: String, pay: Bool = true) throws -> String {
        let parameters = try Self.parameters(query: [], body: Array(orderString.utf8))
        try verify(parameters)
        guard parameters["method"] == "alipay.trade.app.pay" else {
            throw SandboxAlipayError.invalidRequest("method must be alipay.trade.app.pay")
        }
        let biz = try bizContent(parameters)
        guard let outTradeNo = biz["out_trade_no"], let amount = biz["total_amount"].flatMap(AlipayAmount.fen),
            amount > 0
        else {
            throw SandboxAlipayError.invalidRequest("biz_content needs out_trade_no and a positive total_amount")
        }
        if let expiry = biz["time_expire"], let date = BeijingTime.date(expiry), clock.now() > date {
            throw SandboxAlipayError.invalidRequest("the order expired at \(expiry) (time_expire)")
        }
        if let existing = trades[outTradeNo] {
            guard existing.totalFen == amount else {
                throw SandboxAlipayError.invalidRequest("out_trade_no reused with another amount")
            }
        } else {
            let number = try serial.take()
            try keep(
                SandboxAlipayTrade(
                    outTradeNo: outTradeNo, tradeNo: tradeNo(number), appID: appID, totalFen: amount,
                    subject: biz["subject"] ?? "",
                    notifyURL: parameters["notify_url"], passbackParams: biz["passback_params"], status: .waitBuyerPay,
                    buyerID: "2088102" + String(format: "%09lld", number % 1_000_000_000)))
        }
        if pay { try self.pay(outTradeNo: outTradeNo) }
        return trades[outTradeNo]!.tradeNo
    }

    /// The buyer confirms: the trade becomes TRADE_SUCCESS and its notification is scheduled.
    public func pay(outTradeNo: String) throws {
        guard var trade = trades[outTradeNo] else { throw SandboxAlipayError.unknownTrade(outTradeNo) }
        guard trade.status != .tradeClosed else { throw SandboxAlipayError.invalidRequest("the trade is closed") }
        guard trade.status == .waitBuyerPay else { return }
        trade.status = .tradeSuccess
        trade.paidAt = BeijingTime.string(clock.now())
        try keep(trade, notifying: [:])
    }

    /// The state of a trade, for tests and the demo.
    public func status(outTradeNo: String) -> AlipayTradeStatus? { trades[outTradeNo]?.status }

    /// Waits until every scheduled notification has been delivered or given up.
    public func settle() async {
        await settleDeliveries()
    }

    // MARK: The gateway

    /// Answers one call of `gateway.do`: (HTTP status, body). As Alipay's gateway, it takes the parameters from the
    /// URL's query string, the form body, or both: Ant's own SDKs send the common parameters (`app_id`, `method`,
    /// `sign`, …) in the query string and only `biz_content` in the body (alipay-sdk-python's `DefaultAlipayClient`,
    /// the PHP `AopClient`), python-alipay-sdk sends everything in the query string of a GET, OrderSafe everything in
    /// a POST body.
    public func gateway(query: [UInt8] = [], body: [UInt8]) async -> (Int, String) {
        if gatewayFaults.first == .shortRefund {
            gatewayFaults.removeFirst()
            shortensNextRefund = true
        }
        if !gatewayFaults.isEmpty {
            switch gatewayFaults.removeFirst() {
            case .serverError: return (502, "Bad Gateway")
            case .timeout(let delay):
                try? await Task.sleep(for: delay)
                return (504, "Gateway Timeout")
            case .systemError:
                return (
                    200,
                    (try? signer.responseBody(
                        method: "alipay.trade.query",
                        json: Self.errorJSON(
                            "20000", "Service Currently Unavailable", "isp.unknow-error", "系统繁忙"))) ?? ""
                )
            case .badSignature:
                let json = Self.errorJSON("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在")
                let name = "alipay_trade_query_response"
                return (200, #"{"\#(name)":\#(json),"sign":"\#((try? signer.sign(json + " ")) ?? "")"}"#)
            case .shortRefund: break
            }
        }
        var method: String?
        do {
            let parameters = try Self.parameters(query: query, body: body)
            method = parameters["method"]
            try verify(parameters)
            let json = try answer(method: method ?? "", biz: try bizContent(parameters))
            return (200, try signer.responseBody(method: method ?? "", json: json))
        } catch let error as SandboxAlipayError {
            return (200, Self.refusal(error, method: method))
        } catch {
            return (500, "internal error")
        }
    }

    /// A gateway-level refusal (`40002 Invalid Arguments`), as Alipay writes it: under the method's own response
    /// name and unsigned when the request named a method it serves, e.g.
    /// `{"alipay_trade_query_response":{"sub_code":"isv.invalid-app-id","code":"40002","sub_msg":"无效的AppID参数","msg":"Invalid Arguments"}}`
    /// (python-alipay-sdk 3.4.0, `_verify_and_return_sync_response`'s docstring, from a real answer), under
    /// `error_response` otherwise.
    static func refusal(_ error: SandboxAlipayError, method: String?) -> String {
        let name =
            method.flatMap { served.contains($0) ? $0.replacingOccurrences(of: ".", with: "_") + "_response" : nil }
            ?? "error_response"
        return #"{"\#(name)":\#(errorJSON("40002", "Invalid Arguments", error.subCode, error.description))}"#
    }

    /// The methods the gateway serves.
    static let served: Set<String> = [
        "alipay.trade.query", "alipay.trade.close", "alipay.trade.refund", "alipay.trade.fastpay.refund.query",
        "alipay.data.dataservice.bill.downloadurl.query",
    ]

    private func answer(method: String, biz: [String: String]) throws -> String {
        let outTradeNo = biz["out_trade_no"] ?? ""
        let notExist = Self.errorJSON("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在")
        switch method {
        case "alipay.trade.query":
            guard let trade = trades[outTradeNo] else { return notExist }
            let status = queriedStatus(of: trade)
            var answer = [
                "code": "10000", "msg": "Success", "trade_no": trade.tradeNo, "out_trade_no": trade.outTradeNo,
                "trade_status": status.rawValue, "total_amount": Self.yuan(trade.totalFen),
                "buyer_user_id": trade.buyerID,
            ]
            answer["send_pay_date"] = status == .waitBuyerPay ? nil : trade.paidAt
            // Returned as the order sent it: Ant's alipay-sdk-python 3.7.1411 reads `passback_params` from the query's
            // answer (`alipay/aop/api/response/AlipayTradeQueryResponse.py`), a field added after the 2017 answers
            // python-alipay-sdk quotes; the sample wins over the older note that only the notification returns it.
            answer["passback_params"] = trade.passbackParams
            return Self.json(answer)
        case "alipay.trade.close":
            guard var trade = trades[outTradeNo] else { return notExist }
            guard trade.status == .waitBuyerPay || trade.status == .tradeClosed else {
                return Self.errorJSON("40004", "Business Failed", "ACQ.TRADE_STATUS_ERROR", "交易状态不合法")
            }
            trade.status = .tradeClosed
            try keep(trade)
            return Self.json(["code": "10000", "msg": "Success", "trade_no": trade.tradeNo, "out_trade_no": outTradeNo])
        case "alipay.trade.refund":
            return try refund(outTradeNo: outTradeNo, biz: biz)
        case "alipay.trade.fastpay.refund.query":
            guard let trade = trades[outTradeNo] else { return notExist }
            let request = biz["out_request_no"] ?? outTradeNo
            guard let fen = trade.refunds[request] else {
                return Self.json([
                    "code": "10000", "msg": "Success", "out_trade_no": outTradeNo, "trade_no": trade.tradeNo,
                ])
            }
            return Self.json([
                "code": "10000", "msg": "Success", "out_trade_no": outTradeNo, "trade_no": trade.tradeNo,
                "out_request_no": request,
                "refund_amount": Self.yuan(fen), "total_amount": Self.yuan(trade.totalFen),
                "refund_status": "REFUND_SUCCESS",
            ])
        case "alipay.data.dataservice.bill.downloadurl.query":
            return billDownloadURL(type: biz["bill_type"] ?? "", date: biz["bill_date"] ?? "")
        default:
            throw SandboxAlipayError.invalidRequest("unknown method '\(method)'")
        }
    }

    private func refund(outTradeNo: String, biz: [String: String]) throws -> String {
        guard var trade = trades[outTradeNo] else {
            return Self.errorJSON("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在")
        }
        guard let request = biz["out_request_no"], var fen = biz["refund_amount"].flatMap(AlipayAmount.fen), fen > 0
        else {
            throw SandboxAlipayError.invalidRequest("refund needs out_request_no and a positive refund_amount")
        }
        if shortensNextRefund, fen > 1 {
            shortensNextRefund = false
            fen -= 1
        }
        var fundChange = "N"
        if trade.refunds[request] == nil {
            guard trade.status == .tradeSuccess else {
                return Self.errorJSON("40004", "Business Failed", "ACQ.TRADE_STATUS_ERROR", "交易状态不合法")
            }
            guard trade.refundedFen + fen <= trade.totalFen else {
                return Self.errorJSON("40004", "Business Failed", "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", "退款金额超限")
            }
            trade.refunds[request] = fen
            trade.refundedAt = (trade.refundedAt ?? [:]).merging([request: BeijingTime.string(clock.now())]) { $1 }
            if trade.refundedFen == trade.totalFen { trade.status = .tradeClosed }
            fundChange = "Y"
            try keep(
                trade,
                notifying: [
                    "refund_fee": Self.yuan(trade.refundedFen), "out_biz_no": request,
                    "gmt_refund": BeijingTime.string(clock.now()),
                ])
        }
        return Self.json([
            "code": "10000", "msg": "Success", "trade_no": trade.tradeNo, "out_trade_no": outTradeNo,
            "refund_fee": Self.yuan(trade.refundedFen), "fund_change": fundChange, "buyer_user_id": trade.buyerID,
        ])
    }

    // MARK: Notifications

    /// A trade as it is now, kept (in memory and in the journal) before anyone hears of it; with `extra`, the
    /// notification of its new state (with those fields) is kept in the same record, then sent: a trade is never paid
    /// without its notification on its way, whenever the process is killed.
    private func keep(_ trade: SandboxAlipayTrade, notifying extra: [String: String]? = nil) throws {
        let outgoing = extra.flatMap { notification(of: trade, extra: $0) }
        try journal.append(.trade(trade, notification: outgoing?.notice))
        trades[trade.outTradeNo] = trade
        if let outgoing { dispatch(outgoing.notice.courierNotice(about: trade.outTradeNo), route: outgoing.route) }
        compactIfDue()
    }

    /// Compacts the journal to what is held now once it has grown enough (see ``SandboxJournal``).
    private func compactIfDue() {
        journal.compactIfDue(
            { SandboxAlipayRecord.holding(trades: trades, waiting: courier.waiting) }, sandbox: "alipay", logger: logger
        )
    }

    /// Sends again, once, every notification the merchant had not acknowledged when the simulator last stopped, from
    /// the first attempt of Alipay's schedule (as Alipay goes on retrying whatever happened to the merchant's server).
    public func resumeNotifications() {
        resumeLeftOver()
    }

    /// A notice left by an earlier process goes again as it was signed.
    func resending(_ notice: CourierNotice) -> CourierNotice? { notice }

    func acknowledged(_ id: String) {
        journal.acknowledge(
            id, holding: { SandboxAlipayRecord.holding(trades: trades, waiting: courier.waiting) }, sandbox: "alipay",
            logger: logger)
    }

    /// A notification about to go out, and how the next injected fault sends it.
    private struct Outgoing {
        var notice: SandboxNotice
        var route: CourierRoute
    }

    /// The signed notification of `trade`'s state (plus `extra`); nil when it has no notify URL or a fault drops it.
    private func notification(of trade: SandboxAlipayTrade, extra: [String: String]) -> Outgoing? {
        guard let url = trade.notifyURL else { return nil }
        var fields: [String: String] = [
            "notify_id": UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
            "notify_type": "trade_status_sync", "notify_time": BeijingTime.string(clock.now()), "charset": "utf-8",
            "version": "1.0",
            "app_id": trade.appID, "auth_app_id": trade.appID, "seller_id": sellerID, "out_trade_no": trade.outTradeNo,
            "trade_no": trade.tradeNo, "trade_status": trade.status.rawValue, "total_amount": Self.yuan(trade.totalFen),
            "receipt_amount": Self.yuan(trade.totalFen), "buyer_id": trade.buyerID, "subject": trade.subject,
            "gmt_create": BeijingTime.string(clock.now()),
            "gmt_payment": trade.paidAt ?? BeijingTime.string(clock.now()),
        ]
        fields["passback_params"] = trade.passbackParams
        fields.merge(extra) { $1 }
        guard var body = try? signer.notificationBody(fields) else { return nil }
        let fault = notificationFaults.isEmpty ? nil : notificationFaults.removeFirst()
        var route = CourierRoute.once
        switch fault {
        case .drop:
            return nil
        case .tamper:
            body = body.replacingOccurrences(of: "total_amount=", with: "total_amount=1")
        case .delay(let delay):
            route = .delayed(delay)
        case .reorder:
            route = .heldBack
        case .duplicate:
            route = .twice
        case nil:
            break
        }
        let notice = SandboxNotice(id: UUID().uuidString.lowercased(), url: url, body: body)
        return Outgoing(notice: notice, route: route)
    }

    /// Sends the held-back notifications of a `.reorder` fault now, if nothing followed them.
    public func releaseHeldNotification() {
        releaseHeld()
    }

    /// True only when the merchant answered exactly `success`.
    private static func post(url: String, body: [UInt8], client: HTTPClient, timeout: Duration) async -> Bool {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded; charset=utf-8")
        request.body = .bytes(ByteBuffer(bytes: body))
        guard let response = try? await client.execute(request, timeout: .init(timeout)),
            var bytes = try? await response.body.collect(upTo: 4096)
        else { return false }
        return response.status.code == 200 && bytes.readString(length: bytes.readableBytes) == "success"
    }

    // MARK: Helpers

    /// The request's parameters from its query string and form body; a name given in both with two values is
    /// refused.
    static func parameters(query: [UInt8], body: [UInt8]) throws -> [String: String] {
        do {
            let fromQuery = try FormEncoding.parse(query)
            let fromBody = try FormEncoding.parse(body)
            return try fromQuery.merging(fromBody) { first, second in
                guard first == second else { throw SandboxAlipayError.invalidRequest("a parameter given twice") }
                return first
            }
        } catch let error as SandboxAlipayError {
            throw error
        } catch {
            throw SandboxAlipayError.invalidRequest("\(error)")
        }
    }

    private func verify(_ parameters: [String: String]) throws {
        guard parameters["app_id"] == appID else { throw SandboxAlipayError.invalidAppID(parameters["app_id"] ?? "") }
        guard parameters["sign_type"] == "RSA2", let sign = parameters["sign"],
            AlipayCredentials.isAppSignature(
                sign, over: SignContent.make(parameters, excluding: SignContent.requestExclusions),
                appPublicKey: appPublicKey)
        else { throw SandboxAlipayError.invalidSignature }
    }

    private func bizContent(_ parameters: [String: String]) throws -> [String: String] {
        guard let text = parameters["biz_content"],
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { throw SandboxAlipayError.invalidRequest("biz_content must be a JSON object") }
        return object.compactMapValues { $0 as? String }
    }

    /// Alipay's 28 digits: the Beijing date, `22001`, and the number.
    private func tradeNo(_ number: Int64) -> String {
        let date = BeijingTime.string(clock.now()).prefix(10).replacingOccurrences(of: "-", with: "")
        return date + "22001" + String(format: "%015lld", number)
    }

    static func json(_ object: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(object)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static func errorJSON(_ code: String, _ message: String, _ subCode: String, _ subMessage: String) -> String {
        json(["code": code, "msg": message, "sub_code": subCode, "sub_msg": subMessage])
    }

    static func yuan(_ fen: Int64) -> String { Money(amountMinor: fen, currency: .cny).decimalString }
}

/// Why the sandbox refused a request (answered as Alipay's `40002` error).
public enum SandboxAlipayError: Error, CustomStringConvertible {
    case invalidRequest(String)
    case invalidAppID(String)
    case invalidSignature
    case unknownTrade(String)

    var subCode: String {
        switch self {
        case .invalidRequest: "isv.invalid-parameter"
        case .invalidAppID: "isv.invalid-app-id"
        case .invalidSignature: "isv.invalid-signature"
        case .unknownTrade: "ACQ.TRADE_NOT_EXIST"
        }
    }

    public var description: String {
        switch self {
        case .invalidRequest(let detail): "invalid request: \(detail)"
        case .invalidAppID(let appID): "unknown app_id '\(appID)'"
        case .invalidSignature: "the request signature does not verify with the app public key"
        case .unknownTrade(let outTradeNo): "no trade \(outTradeNo)"
        }
    }
}
