import ChannelSupport
import Foundation
import OrderSafeModel
import Sandbox
import Synchronization
import Testing
import _CryptoExtras

@testable import WeChatPay

/// A merchant, a sandbox WeChat Pay and a client wired to it in process; notifications land in `inbox`.
struct WeChatPayWorld {
    static let merchantKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let platformKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let apiV3Key = "0123456789abcdef0123456789abcdef"
    static let merchantSerial = "3775B6A45ACD588826D15E583A95F5DD********".replacingOccurrences(of: "*", with: "0")

    let sandbox: SandboxWeChatPay
    let merchant: MerchantSigner
    let inbox: Inbox
    let mode: SandboxWeChatPay.Mode

    /// What the sandbox delivered, and what the merchant answers (2xx unless `refuse` is set).
    actor Inbox {
        var received: [(headers: [String: String], body: [UInt8])] = []
        var refuseNext = 0

        func take(_ headers: [String: String], _ body: [UInt8]) -> Bool {
            if refuseNext > 0 {
                refuseNext -= 1
                return false
            }
            received.append((headers, body))
            return true
        }

        func refuse(_ count: Int) { refuseNext = count }
    }

    /// - Parameter overHTTP: notifications go to each order's `notify_url` over HTTP, as the sandbox sends them in
    ///   a server (else into ``inbox``).
    init(
        mode: SandboxWeChatPay.Mode = .publicKey(id: "PUB_KEY_ID_0119000000012026112200000001"), folder: URL? = nil,
        clock: any WallClock = SystemClock(), overHTTP: Bool = false, timeScale: Double = 0.0001,
        notifyTimeout: Duration = .seconds(10)
    ) throws {
        let inbox = Inbox()
        self.inbox = inbox
        self.mode = mode
        merchant = try MerchantSigner(
            merchantID: "1900000001", certificateSerial: Self.merchantSerial,
            privateKey: Self.merchantKey.pemRepresentation)
        let intoInbox: SandboxWeChatPay.NotificationSink = { _, headers, body in await inbox.take(headers, body) }
        sandbox = try SandboxWeChatPay(
            merchantID: "1900000001", appID: "wx0123456789abcdef", merchantSerial: Self.merchantSerial,
            merchantPublicKey: Self.merchantKey.publicKey, apiV3Key: Self.apiV3Key, platformKey: Self.platformKey,
            mode: mode,
            timeScale: timeScale, clock: clock, folder: folder,
            sink: overHTTP ? nil : intoInbox, notifyTimeout: notifyTimeout)
    }

    var transport: InProcessTransport { sandbox.transport }
    static let retry = RetryPolicy(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(2))

    func keys() throws -> any WeChatPayKeyProvider {
        switch mode {
        case .publicKey(let id):
            var keys = WeChatPayVerificationKeys()
            try keys.addPublicKey(id: id, pem: Self.platformKey.publicKey.pemRepresentation)
            return keys
        case .platformCertificate:
            return certificateStore()
        }
    }

    func certificateStore(apiV3Key: String = apiV3Key) -> PlatformCertificateStore {
        PlatformCertificateStore(
            merchant: merchant, cipher: try! APIv3Cipher(apiV3Key: apiV3Key),
            baseURL: "http://sandbox.local/sandbox/wechatpay",
            transport: transport, retry: Self.retry, unknownSerialCooldown: 0)
    }

    func client(keys: (any WeChatPayKeyProvider)? = nil, clock: any WallClock = SystemClock()) throws
        -> WeChatPayClient
    {
        WeChatPayClient(
            merchant: merchant, appID: "wx0123456789abcdef", keys: try keys ?? self.keys(),
            baseURL: "http://sandbox.local/sandbox/wechatpay", transport: transport, retry: Self.retry, clock: clock)
    }

    func order(_ outTradeNo: String, fen: Int64 = 9900) -> WeChatPayAppOrder {
        WeChatPayAppOrder(
            outTradeNo: outTradeNo, description: "礼盒 Gift box", amount: Money(amountMinor: fen, currency: .cny),
            notifyURL: "https://merchant.example/v1/notify/wechatpay", attach: "user=alice")
    }
}

@Suite("WeChat Pay client against the sandbox")
struct WeChatPaySandboxTests {
    @Test(
        "a download_url off the configured API host (another host, port or scheme, loopback, a Unix socket) is never sent the merchant's signature"
    )
    func downloadsStayOnTheAPIHost() async throws {
        let client = try WeChatPayWorld().client()
        for url in [
            "http://127.0.0.1:9/v3/billdownload/file?token=x", "http://sandbox.local:8443/v3/billdownload/file",
            "https://sandbox.local/v3/billdownload/file", "http://evil.example/v3/billdownload/file",
            "http+unix://%2Frun%2Fdocker.sock/v3/billdownload/file", "http://user@sandbox.local/v3/billdownload/file",
        ] {
            await #expect(
                throws: WeChatPayAPIError.malformedResponse(
                    "download_url is not on the configured API host; not fetched"),
                "\(url)"
            ) {
                _ = try await client.downloadFile(WeChatPayBill(hashType: "SHA1", digest: "", downloadURL: url))
            }
        }
    }

    @Test(
        "the sandbox is a WeChat Pay host at its base path: a signature over the path below it (wechatpayv3) or over the whole path (wechatpay-go) is accepted, any other refused; a bill download needs one too"
    )
    func signedPathsAndDownloads() async throws {
        let world = try WeChatPayWorld()
        let clock = SystemClock()
        func call(_ target: String, signing signed: String?) async -> ProviderHTTPResponse {
            var headers: [String: String] = [:]
            if let signed {
                headers["Authorization"] = try? world.merchant.authorization(
                    method: "GET", pathAndQuery: signed, timestamp: Int64(clock.now().timeIntervalSince1970),
                    nonce: WeChatPayNonce.random(), body: "")
            }
            return await world.sandbox.handle(method: "GET", pathAndQuery: target, headers: headers, body: [])
        }
        let query = "/v3/pay/transactions/out-trade-no/OS20261128-PATH"
        #expect(await call("/sandbox/wechatpay" + query, signing: query).status == 404, "ORDER_NOT_EXIST: let in")
        #expect(await call("/sandbox/wechatpay" + query, signing: "/sandbox/wechatpay" + query).status == 404)
        #expect(await call("/sandbox/wechatpay" + query, signing: "/elsewhere" + query).status == 401)
        #expect(await call("/sandbox/wechatpay" + query, signing: query + "X").status == 401)
        let download = "/sandbox/wechatpay/v3/billdownload/file?token=2026-11-28"
        #expect(await call(download, signing: nil).status == 401, "a bill is never handed out unsigned")
        let signedDownload = await call(download, signing: "/v3/billdownload/file?token=2026-11-28")
        #expect(signedDownload.status == 400, "NO_STATEMENT_EXIST: let in, no bill for a day without trades")
    }

    @Test(
        "a sandbox restarted on its data folder, at the same second, reuses no id, forgets no transaction, resends what was not acknowledged"
    )
    func restartsOnItsFolder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wechatpay-sandbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var ids: [String] = []
        let now = PinnedClock(date: Date())  // the merchant signs with the real time, checked against the sandbox's
        for run in 0..<3 {
            let world = try WeChatPayWorld(folder: folder, clock: now)
            let client = try world.client()
            if run > 0 {
                guard
                    case .transaction(let earlier) = try await client.queryTransaction(
                        outTradeNo: "OS20261126-R\(run - 1)P0")
                else {
                    Issue.record("run \(run): the transaction paid before the restart is gone")
                    return
                }
                #expect(earlier.tradeState == .success)
            }
            // The merchant is down for this run's notifications: the next start sends them again.
            await world.inbox.refuse(1_000)
            for index in 0..<2 {
                let outTradeNo = "OS20261126-R\(run)P\(index)"
                try await world.sandbox.open(
                    try client.appInvocation(prepayID: try await client.prepayApp(world.order(outTradeNo))))
            }
            ids += await world.sandbox.payments.map(\.providerTransactionID).filter { !ids.contains($0) }
            await world.sandbox.settle()
        }
        #expect(ids.count == 6)
        #expect(Set(ids).count == 6, "\(ids)")
        #expect(ids.allSatisfy { $0.utf8.count == 28 && $0.allSatisfy(\.isNumber) })
        let last = try WeChatPayWorld(folder: folder, clock: now)
        await last.sandbox.resumeNotifications()
        await last.sandbox.settle()
        let received = await last.inbox.received
        #expect(received.count == 6, "every notification refused before the restarts arrives once, signed anew")
        let parser = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(keys: try last.keys(), clock: SystemClock()),
            cipher: try APIv3Cipher(apiV3Key: WeChatPayWorld.apiV3Key))
        for delivery in received {
            #expect(
                try await parser.parse(headers: delivery.headers, body: delivery.body).eventType
                    == "TRANSACTION.SUCCESS")
        }
        try Data("not a number".utf8).write(to: folder.appendingPathComponent("wechatpay-id-counter"))
        #expect(throws: (any Error).self) { try WeChatPayWorld(folder: folder) }
    }

    @Test("prepay → app invocation → pay → signed, encrypted notification → query, in public-key mode")
    func paymentFlow() async throws {
        let world = try WeChatPayWorld()
        let client = try world.client()
        #expect(try await client.queryTransaction(outTradeNo: "OS20261122-WX0001") == .notFound)
        let prepayID = try await client.prepayApp(world.order("OS20261122-WX0001"))
        #expect(prepayID.hasPrefix("wx"))
        // The same order asked again gets the same prepay_id; another amount is refused.
        #expect(try await client.prepayApp(world.order("OS20261122-WX0001")) == prepayID)
        await #expect(
            throws: WeChatPayAPIError.business(
                status: 400, code: "OUT_TRADE_NO_USED", message: "out_trade_no was used with other parameters")
        ) {
            try await client.prepayApp(world.order("OS20261122-WX0001", fen: 1))
        }
        guard case .transaction(let unpaid) = try await client.queryTransaction(outTradeNo: "OS20261122-WX0001") else {
            Issue.record("an opened order must be found")
            return
        }
        #expect(unpaid.tradeState == .notPay && unpaid.transactionID == nil)

        let invocation = try client.appInvocation(prepayID: prepayID)
        #expect(invocation.package == "Sign=WXPay" && invocation.partnerid == "1900000001")
        var forged = invocation
        forged.prepayid = "wx-other"
        await #expect(throws: SandboxWeChatPayError.self) { try await world.sandbox.open(forged) }
        try await world.sandbox.open(invocation)
        await world.sandbox.settle()

        let received = await world.inbox.received
        #expect(received.count == 1)
        let parser = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(keys: try world.keys(), clock: SystemClock()),
            cipher: try APIv3Cipher(apiV3Key: WeChatPayWorld.apiV3Key))
        let notification = try await parser.parse(headers: received[0].headers, body: received[0].body)
        #expect(notification.eventType == "TRANSACTION.SUCCESS")
        let transaction = try WeChatPayTransaction(resource: notification.plaintext)
        try transaction.check(
            appID: "wx0123456789abcdef", merchantID: "1900000001", outTradeNo: "OS20261122-WX0001",
            amount: Money(amountMinor: 9900, currency: .cny))
        #expect(transaction.attach == "user=alice")
        guard case .transaction(let paid) = try await client.queryTransaction(transactionID: transaction.transactionID!)
        else {
            Issue.record("query by transaction id")
            return
        }
        #expect(paid == transaction)
    }

    @Test("close, refund (idempotent by out_refund_no), refund query, refund notification, bill download")
    func closeRefundBill() async throws {
        let clock = SteppedClock(Date())
        let world = try WeChatPayWorld(clock: clock)
        let client = try world.client(clock: clock)
        _ = try await client.prepayApp(world.order("OS20261122-CLOSE1"))
        try await client.closeTransaction(outTradeNo: "OS20261122-CLOSE1")
        #expect(await world.sandbox.state(outTradeNo: "OS20261122-CLOSE1") == .closed)
        try await client.closeTransaction(outTradeNo: "OS20261122-NEVER1")

        let prepayID = try await client.prepayApp(world.order("OS20261122-PAID01"))
        try await world.sandbox.open(try client.appInvocation(prepayID: prepayID))
        await #expect(throws: WeChatPayAPIError.business(status: 400, code: "ORDER_PAID", message: "订单已支付")) {
            try await client.closeTransaction(outTradeNo: "OS20261122-PAID01")
        }
        let request = WeChatPayRefundRequest(
            outTradeNo: "OS20261122-PAID01", outRefundNo: "RF-1", refund: Money(amountMinor: 900, currency: .cny),
            total: Money(amountMinor: 9900, currency: .cny), reason: "test",
            notifyURL: "https://merchant.example/v1/notify/wechatpay")
        let refund = try await client.refund(request)
        #expect(refund.status == .success && refund.refundFen == 900 && refund.totalFen == 9900)
        #expect(try await client.refund(request) == refund)
        #expect(try await client.queryRefund(outRefundNo: "RF-1") == .refund(refund))
        #expect(try await client.queryRefund(outRefundNo: "RF-404") == .notFound)
        var tooMuch = request
        tooMuch.outRefundNo = "RF-2"
        tooMuch.refund = Money(amountMinor: 9001, currency: .cny)
        await #expect(throws: WeChatPayAPIError.self) { try await client.refund(tooMuch) }

        await world.sandbox.settle()
        let received = await world.inbox.received
        #expect(received.count == 2)
        let parser = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(keys: try world.keys(), clock: SystemClock()),
            cipher: try APIv3Cipher(apiV3Key: WeChatPayWorld.apiV3Key))
        let refundNotification = try await parser.parse(headers: received[1].headers, body: received[1].body)
        #expect(refundNotification.eventType == "REFUND.SUCCESS")
        #expect(try WeChatPayRefund(resource: refundNotification.plaintext).outRefundNo == "RF-1")

        // A day without a payment has no bill; today's is written tomorrow morning (WeChat Pay's two refusals).
        await #expect(
            throws: WeChatPayAPIError.business(status: 400, code: "NO_STATEMENT_EXIST", message: "账单文件不存在")
        ) { try await client.tradeBill(date: "2026-11-21") }
        let today = String(RFC3339Beijing.string(clock.now()).prefix(10))
        await #expect(
            throws: WeChatPayAPIError.business(status: 400, code: "STATEMENT_CREATING", message: "账单生成中")
        ) { try await client.tradeBill(date: today) }
        // 10:00 the next day in Beijing: the bill is there.
        let beijingSeconds = (Int(clock.now().timeIntervalSince1970) + 8 * 3600) % 86400
        clock.advance(by: TimeInterval(86400 - beijingSeconds + 10 * 3600))
        let bill = try await client.tradeBill(date: today)
        #expect(bill.hashType == "SHA1")
        await world.sandbox.setDownloadBase("http://sandbox.local")
        // Today's bill in WeChat Pay's format, from what the sandbox charged and refunded: the payment (99.00, fee
        // 0.59) and its refund (9.00, fee 0.05 returned), adding up to the summary.
        let parsed = try WeChatPayTradeBill(try await client.download(try await client.tradeBill(date: today)))
        let payment = try #require(parsed.rows.first { $0.state == "SUCCESS" })
        let refunded = try #require(parsed.rows.first { $0.state == "REFUND" })
        #expect(parsed.rows.count == 2)
        #expect(payment.outTradeNo == "OS20261122-PAID01" && payment.settlementFen == 9900 && payment.feeFen == 59)
        #expect(refunded.outRefundNo == "RF-1" && refunded.refundFen == 900 && refunded.feeFen == -5)
        #expect(refunded.refundID == refund.refundID && refunded.transactionID == payment.transactionID)
        #expect(parsed.totals == .init(count: 2, settlementFen: 9900, refundFen: 900, feeFen: 54, orderFen: 9900))
        // Asked for gzipped (tar_type=GZIP), the download is smaller and inflates to the same bill, whose digest it is.
        let gzipped = try await client.tradeBill(date: today, gzip: true)
        #expect(gzipped.gzip && gzipped.digest == bill.digest && gzipped.downloadURL.contains("token=gzip-"))
        #expect(
            try await client.download(gzipped) == (try await client.download(try await client.tradeBill(date: today))))
        var unread = gzipped
        unread.gzip = false  // the gzip's bytes taken for the bill: not what the digest covers
        await #expect(throws: WeChatPayAPIError.billHashMismatch) { try await client.download(unread) }
        // The same day's fund-flow bill: the payment credited and its fee, the refund's fee returned and the refund.
        let funds = try WeChatPayFundFlowBill(
            try await client.download(try await client.fundFlowBill(date: today)))
        #expect(funds.rows.map(\.businessName) == ["交易", "交易", "退款", "退款"])
        #expect(funds.rows.map(\.businessType) == ["交易", "扣除交易手续费", "退还交易手续费", "退款"])
        #expect(funds.totals == .init(count: 4, incomeCount: 2, incomeFen: 9905, expenseCount: 2, expenseFen: 959))
        #expect(funds.rows.last.map(\.balanceFen) == Int64(9905 - 959))
        var altered = bill
        altered.digest = String(repeating: "0", count: 40)
        altered.downloadURL = "http://sandbox.local/sandbox/wechatpay/v3/billdownload/file?token=\(today)"
        await #expect(throws: WeChatPayAPIError.billHashMismatch) { try await client.download(altered) }
    }

    @Test("5xx and FREQUENCY_LIMITED are retried; a timeout is retried; a bad response signature is never trusted")
    func apiFaults() async throws {
        let world = try WeChatPayWorld()
        let client = try world.client()
        await world.sandbox.injectAPIFault(.serverError)
        await world.sandbox.injectAPIFault(.frequencyLimited)
        #expect(try await client.queryTransaction(outTradeNo: "OS20261122-RETRY1") == .notFound)
        await world.sandbox.injectAPIFault(.serverError, count: 3)
        await #expect(throws: WeChatPayAPIError.systemError(status: 500, code: "SYSTEM_ERROR", message: "系统错误")) {
            try await client.queryTransaction(outTradeNo: "OS20261122-RETRY1")
        }
        let impatient = WeChatPayClient(
            merchant: world.merchant, appID: "wx0123456789abcdef", keys: try world.keys(),
            baseURL: "http://sandbox.local/sandbox/wechatpay",
            transport: world.transport,
            retry: RetryPolicy(attempts: 2, firstDelay: .milliseconds(1), timeout: .milliseconds(50)))
        await world.sandbox.injectAPIFault(.timeout(.milliseconds(400)))
        #expect(try await impatient.queryTransaction(outTradeNo: "OS20261122-RETRY1") == .notFound)
        // A 2xx answer is read only once verified (an unsigned 404 can only ever mean "not yet").
        _ = try await client.prepayApp(world.order("OS20261122-RETRY1"))
        await world.sandbox.injectAPIFault(.badSignature)
        await #expect(throws: WeChatPayAPIError.verification(.badSignature)) {
            try await client.queryTransaction(outTradeNo: "OS20261122-RETRY1")
        }
        // A request signed with another merchant key is refused by WeChat Pay's side, and not retried.
        let stranger = try MerchantSigner(
            merchantID: "1900000001", certificateSerial: WeChatPayWorld.merchantSerial,
            privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
        let forged = WeChatPayClient(
            merchant: stranger, appID: "wx0123456789abcdef", keys: try world.keys(),
            baseURL: "http://sandbox.local/sandbox/wechatpay",
            transport: world.transport, retry: WeChatPayWorld.retry)
        await #expect(
            throws: WeChatPayAPIError.business(
                status: 401, code: "SIGN_ERROR", message: "unauthorized: the Authorization signature does not verify")
        ) {
            try await forged.queryTransaction(outTradeNo: "OS20261122-RETRY1")
        }
    }

    @Test("certificate mode: downloaded, decrypted and verified; rotation picked up on the unknown serial")
    func certificateRotation() async throws {
        let world = try WeChatPayWorld(mode: .platformCertificate)
        let store = world.certificateStore()
        let client = try world.client(keys: store)
        let first = await world.sandbox.signingSerial
        _ = try await client.prepayApp(world.order("OS20261122-CERT01"))
        #expect(await store.entries.map(\.serial) == [first])
        let second = try await world.sandbox.rotatePlatformCertificate()
        #expect(second != first)
        // The next answer is signed with the new certificate: the store refreshes on the unknown serial.
        _ = try await client.queryTransaction(outTradeNo: "OS20261122-CERT01")
        #expect(Set(await store.entries.map(\.serial)) == [first, second])

        // A wrong APIv3 key cannot decrypt the certificates: the error says so.
        let wrongKey = world.certificateStore(apiV3Key: "ffffffffffffffffffffffffffffffff")
        await #expect(throws: WeChatPayError.decryptionFailed) { try await wrongKey.refresh() }
        let unusable = try world.client(keys: wrongKey)
        await #expect(throws: WeChatPayAPIError.self) {
            try await unusable.queryTransaction(outTradeNo: "OS20261122-CERT01")
        }
    }

    @Test(
        "a merchant's server that refuses connections: each attempt fails as soon as the connection is refused, as the real providers' do, not at its 10-second deadline"
    )
    func notificationsToARefusingServer() async throws {
        // Each attempt may take five minutes: a client that connects again until the attempt's deadline cannot end
        // it sooner, one that does not ends it in milliseconds alone (in up to 13 s under the whole suite's load).
        let world = try WeChatPayWorld(overHTTP: true, timeScale: 0.00001, notifyTimeout: .seconds(300))
        let client = try world.client()
        var order = world.order("OS20261129-REFUSED")
        // Port 1 (tcpmux): nothing listens there on these machines, so each connection is refused.
        order.notifyURL = "http://127.0.0.1:1/v1/notify/wechatpay"
        let invocation = try client.appInvocation(prepayID: try await client.prepayApp(order))
        let started = ContinuousClock.now
        try await world.sandbox.open(invocation)
        while await world.sandbox.deliveries.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let first = ContinuousClock.now - started
        guard first < .seconds(290) else {
            Issue.record("the first refused connection took \(first): retried until its deadline")
            return
        }
        await world.sandbox.settle()
        let attempts = await world.sandbox.deliveries
        #expect(attempts.count == SandboxWeChatPay.retrySchedule.count + 1 && attempts.allSatisfy { !$0.accepted })
    }

    @Test("notification faults: drop, duplicate, reorder, stale timestamp; refused deliveries are retried")
    func notificationFaults() async throws {
        let world = try WeChatPayWorld()
        let client = try world.client()
        let parser = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(keys: try world.keys(), clock: SystemClock()),
            cipher: try APIv3Cipher(apiV3Key: WeChatPayWorld.apiV3Key))
        func pay(_ outTradeNo: String) async throws {
            try await world.sandbox.open(
                try client.appInvocation(prepayID: try await client.prepayApp(world.order(outTradeNo))))
        }
        await world.sandbox.injectNotificationFault(.drop)
        try await pay("OS20261122-DROP01")
        await world.sandbox.injectNotificationFault(.duplicate)
        try await pay("OS20261122-DUPL01")
        await world.sandbox.injectNotificationFault(.reorder)
        try await pay("OS20261122-REOR01")
        try await pay("OS20261122-REOR02")
        await world.sandbox.injectNotificationFault(.staleTimestamp)
        try await pay("OS20261122-STALE1")
        await world.sandbox.settle()
        await world.inbox.refuse(2)
        try await pay("OS20261122-RETRY1")
        await world.sandbox.settle()

        var delivered: [String] = []
        var stale = 0
        for (headers, body) in await world.inbox.received {
            let notification: WeChatPayNotification
            do {
                notification = try await parser.parse(headers: headers, body: body)
            } catch {
                #expect("\(error)".contains("more than 5 minutes"))
                stale += 1
                continue
            }
            delivered.append(try WeChatPayTransaction(resource: notification.plaintext).outTradeNo)
        }
        #expect(!delivered.contains("OS20261122-DROP01"))
        #expect(delivered.filter { $0 == "OS20261122-DUPL01" }.count == 2)
        #expect(delivered.firstIndex(of: "OS20261122-REOR02")! < delivered.firstIndex(of: "OS20261122-REOR01")!)
        #expect(stale == 1)
        #expect(delivered.contains("OS20261122-RETRY1"))
        let attempts = await world.sandbox.deliveries.filter { $0.outTradeNo == "OS20261122-RETRY1" }.map(\.attempt)
        #expect(attempts == [1, 2, 3])
        // The sandbox's own record: what was paid, whatever the notifications did.
        #expect(await world.sandbox.paidTransactions.count == 6)
    }
}

/// A clock the test moves forward (to the morning a bill is published).
private final class SteppedClock: WallClock {
    private let date: Mutex<Date>
    init(_ date: Date) { self.date = Mutex(date) }
    func now() -> Date { date.withLock { $0 } }
    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

/// One instant for every restart: a sandbox numbered from the clock alone would repeat itself.
private struct PinnedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}
