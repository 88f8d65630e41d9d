import Alipay
import AsyncHTTPClient
import Foundation
import NIOCore
import OrderSafeModel
import Sandbox
import Synchronization
import Testing
import _CryptoExtras

@Suite("Alipay client against the sandbox gateway")
struct AlipaySandboxTests {
    @Test(
        "a sandbox restarted on the same data folder, at the same second, never reuses a trade_no and forgets no trade")
    func restartsOnItsFolder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "alipay-sandbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var tradeNos: [String] = []
        for run in 0..<3 {
            let sandbox = try AlipayFixture.sandbox(folder: folder)
            for earlier in 0..<run { #expect(await sandbox.status(outTradeNo: "OS-R\(earlier)P0") == .tradeSuccess) }
            for index in 0..<2 {
                tradeNos.append(
                    try await sandbox.open(
                        orderString: try AlipayFixture.orderString(
                            "OS-R\(run)P\(index)", notifyURL: "http://127.0.0.1:9/notify"), pay: index == 0))
            }
        }
        #expect(Set(tradeNos).count == 6, "\(tradeNos)")
        #expect(tradeNos.allSatisfy { $0.utf8.count == 28 && $0.allSatisfy(\.isNumber) })
        try Data("-1".utf8).write(to: folder.appendingPathComponent("alipay-id-counter"))
        #expect(throws: (any Error).self) { try AlipayFixture.sandbox(folder: folder) }
    }

    @Test("a notification the merchant never acknowledged is sent again by the sandbox started again on its folder")
    func unacknowledgedNotificationsOutliveTheProcess() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "alipay-sandbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try AlipayFixture.sandbox(folder: folder)
        await first.setNotificationSink { _, _ in false }  // the merchant's server is down
        try await first.open(
            orderString: try AlipayFixture.orderString("OS-DOWN", notifyURL: "http://127.0.0.1:9/notify"))
        try await first.open(
            orderString: try AlipayFixture.orderString("OS-SEEN", notifyURL: "http://127.0.0.1:9/notify"), pay: false)
        await first.settle()
        let received = Mutex<[String]>([])
        let second = try AlipayFixture.sandbox(folder: folder)
        await second.setNotificationSink { _, body in
            received.withLock { $0.append(body) }
            return true
        }
        try await second.pay(outTradeNo: "OS-SEEN")
        await second.resumeNotifications()
        await second.settle()
        let bodies = received.withLock { $0 }
        #expect(bodies.count == 2)
        #expect(bodies.filter { $0.contains("out_trade_no=OS-DOWN") }.count == 1)
        #expect(bodies.filter { $0.contains("out_trade_no=OS-SEEN") }.count == 1)
        // Acknowledged now: a third start sends nothing again.
        let third = try AlipayFixture.sandbox(folder: folder)
        await third.setNotificationSink { _, _ in
            received.withLock { $0.append("again") }
            return true
        }
        await third.resumeNotifications()
        await third.settle()
        #expect(received.withLock { $0.count } == 2)
    }

    @Test("the journal: a last line cut short by a kill is dropped; a damaged line before it is an error naming it")
    func journalReadStrictly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "alipay-sandbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = folder.appendingPathComponent("alipay.journal")
        try await AlipayFixture.sandbox(folder: folder).open(
            orderString: try AlipayFixture.orderString("OS-J1", notifyURL: "http://127.0.0.1:9/notify"), pay: false)
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"trade":{"outTra"#.utf8))
        try handle.close()
        #expect(await (try AlipayFixture.sandbox(folder: folder)).status(outTradeNo: "OS-J1") == .waitBuyerPay)
        #expect(try String(contentsOf: journal, encoding: .utf8).hasSuffix("}\n"), "the torn line is cut off")
        try Data("not json\n".utf8).write(to: journal)
        #expect(throws: (any Error).self) { try AlipayFixture.sandbox(folder: folder) }
    }

    @Test(
        "the journal follows what the sandbox holds: compacted as it grows and on start, every trade and every unacknowledged notification kept"
    )
    func journalCompacted() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "alipay-sandbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = folder.appendingPathComponent("alipay.journal")
        func lines() throws -> Int { try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").count }
        let busy = try AlipayFixture.sandbox(folder: folder)
        await busy.setNotificationSink { _, _ in true }
        // Three records a purchase (opened, paid with its notification, acknowledged): 2,100 lines of about 1.6 MB
        // uncompacted, past the 1 MiB floor.
        let purchases = 700
        for index in 0..<purchases {
            try await busy.open(
                orderString: try AlipayFixture.orderString("OS-C\(index)", notifyURL: "http://127.0.0.1:9/notify"))
        }
        await busy.settle()
        let grown = try lines()
        #expect(grown < 2 * purchases, "compacted while growing: \(grown) lines")
        await busy.setNotificationSink { _, _ in false }  // the merchant's server goes down
        try await busy.open(
            orderString: try AlipayFixture.orderString("OS-DOWN", notifyURL: "http://127.0.0.1:9/notify"))
        await busy.settle()

        let restarted = try AlipayFixture.sandbox(folder: folder)
        #expect(
            try lines() == purchases + 2, "compacted on start: each trade once, the one notification not acknowledged")
        for index in stride(from: 0, to: purchases, by: 99) {
            #expect(await restarted.status(outTradeNo: "OS-C\(index)") == .tradeSuccess)
        }
        let received = Mutex<[String]>([])
        await restarted.setNotificationSink { _, body in
            received.withLock { $0.append(body) }
            return true
        }
        await restarted.resumeNotifications()
        await restarted.settle()
        #expect(received.withLock { $0.count == 1 && $0[0].contains("out_trade_no=OS-DOWN") })
        #expect(await restarted.payments.count == purchases + 1)
    }

    @Test("query, pay, close, refund (idempotent), refund query and bill URL over HTTP")
    func lifecycle() async throws {
        let sandbox = try AlipayFixture.sandbox()
        let receiver = AlipayFixture.Receiver()
        try await AlipayFixture.live(sandbox: sandbox, receiver: receiver) { (base: String) async throws(any Error) in
            let client = AlipayFixture.client(base)
            #expect(try await client.queryTrade(outTradeNo: "OS-1") == .notFound)
            #expect(try await client.closeTrade(outTradeNo: "OS-1") == .notFound)
            try await sandbox.open(
                orderString: try AlipayFixture.orderString("OS-1", notifyURL: base + "/notify"), pay: false)
            guard case .trade(let waiting) = try await client.queryTrade(outTradeNo: "OS-1") else {
                Issue.record("no trade")
                return
            }
            #expect(waiting.status == .waitBuyerPay)
            #expect(waiting.totalAmount == Money(amountMinor: 9900, currency: .cny))
            try await sandbox.pay(outTradeNo: "OS-1")
            guard case .trade(let paid) = try await client.queryTrade(outTradeNo: "OS-1") else {
                Issue.record("no trade")
                return
            }
            #expect(paid.status == .tradeSuccess)
            await #expect(
                throws: AlipayGatewayError.business(
                    code: "40004", subCode: "ACQ.TRADE_STATUS_ERROR", message: "交易状态不合法")
            ) {
                try await client.closeTrade(outTradeNo: "OS-1")
            }
            let refund = try await client.refund(
                outTradeNo: "OS-1", amount: Money(amountMinor: 900, currency: .cny), outRequestNo: "R1")
            #expect(refund.fundChange && refund.refundFee.amountMinor == 900)
            let again = try await client.refund(
                outTradeNo: "OS-1", amount: Money(amountMinor: 900, currency: .cny), outRequestNo: "R1")
            #expect(!again.fundChange && again.refundFee.amountMinor == 900)
            #expect(
                try await client.queryRefund(outTradeNo: "OS-1", outRequestNo: "R1")
                    == .refund(
                        outRequestNo: "R1", amount: Money(amountMinor: 900, currency: .cny), status: "REFUND_SUCCESS"))
            #expect(try await client.queryRefund(outTradeNo: "OS-1", outRequestNo: "R9") == .notFound)
            // A day without a trade has no bill (isp.bill_not_exist), which the client answers as nil; today's,
            // published at once, downloads over HTTP from the sandbox's configured address (the gateway's origin).
            #expect(try await client.billDownloadURL(billDate: "2026-11-01") == nil)
            await sandbox.publishBillsAtOnce(true)
            await sandbox.setDownloadBase(base + "/alipay/")
            let today = String(BeijingTime.string(AlipayFixture.now).prefix(10))
            let url = try #require(try await client.billDownloadURL(billDate: today))
            #expect(url.hasPrefix(base + "/alipay/downloadBillFile.resource?"))
            let bill = try AlipayTradeBill(zip: try await client.downloadBill(url: url))
            #expect(bill.rows.map(\.kind) == [.trade, .refund] && bill.totals.refundReceiptFen == -900)
            // No such day: a plain-text 404, as the route is documented.
            let missing = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/alipay/downloadBillFile.resource?bizDates=00000000"),
                timeout: AlipayFixture.deadline)
            #expect(missing.status == .notFound && missing.headers["Content-Type"] == ["text/plain"])
            await sandbox.settle()
            // Delivery is at least once: a notification whose answer was slow on a loaded machine is sent again
            // (the same notify_id), as Alipay does. Two distinct notifications, the refund's last.
            var seen = Set<String>()
            let accepted = await receiver.accepted.filter { seen.insert($0.notifyID).inserted }
            #expect(accepted.map(\.tradeStatus) == [.tradeSuccess, .tradeSuccess])
            #expect(accepted.last?.refund?.refundFee == Money(amountMinor: 900, currency: .cny))
            #expect(accepted.last?.refund?.outBizNo == "R1")
        }
    }

    @Test("5xx and system errors are retried over real HTTP; a bad response signature is not trusted")
    func gatewayFaults() async throws {
        let sandbox = try AlipayFixture.sandbox()
        try await AlipayFixture.live(sandbox: sandbox, receiver: AlipayFixture.Receiver()) {
            (base: String) async throws(any Error) in
            let client = AlipayFixture.client(base)
            await sandbox.injectGatewayFault(.serverError, count: 2)
            #expect(try await client.queryTrade(outTradeNo: "X") == .notFound)
            await sandbox.injectGatewayFault(.systemError)
            await sandbox.injectGatewayFault(.serverError)
            #expect(try await client.queryTrade(outTradeNo: "X") == .notFound)
            await sandbox.injectGatewayFault(.badSignature)
            await #expect(throws: AlipayGatewayError.badSignature) { try await client.queryTrade(outTradeNo: "X") }
            await sandbox.injectGatewayFault(.serverError, count: 3)
            await #expect(throws: AlipayGatewayError.unavailable("HTTP 502")) {
                try await client.queryTrade(outTradeNo: "X")
            }
        }
    }

    @Test(
        "the gateway takes the parameters from the query string, the body or both (Ant's SDKs split them), GET or POST; a refusal is under the method's own name, unsigned, as Alipay writes it"
    )
    func parametersWhereverTheSDKsPutThem() async throws {
        let sandbox = try AlipayFixture.sandbox()
        let signer = AlipayRequestSigner(credentials: AlipayFixture.credentials)
        var parameters = try signer.signedParameters(
            method: "alipay.trade.query", bizContent: ["out_trade_no": "OS-NONE"], at: AlipayFixture.now)
        let biz = ["biz_content": parameters.removeValue(forKey: "biz_content")!]
        let split = await sandbox.gateway(
            query: Array(FormEncoding.encode(parameters).utf8), body: Array(FormEncoding.encode(biz).utf8))
        #expect(split.0 == 200)
        #expect(split.1.hasPrefix(#"{"alipay_trade_query_response":{"#) && split.1.contains("ACQ.TRADE_NOT_EXIST"))
        #expect(split.1.contains(#""sign":""#), "a business answer is signed")
        let all = parameters.merging(biz) { $1 }
        let inQuery = await sandbox.gateway(query: Array(FormEncoding.encode(all).utf8), body: [])
        #expect(inQuery.1 == split.1, "python-alipay-sdk's GET: everything in the query string")

        var wrongApp = parameters
        wrongApp["app_id"] = "2021000000009999"
        let refused = await sandbox.gateway(query: Array(FormEncoding.encode(wrongApp).utf8), body: [])
        #expect(refused.1.hasPrefix(#"{"alipay_trade_query_response":{"code":"40002""#), "\(refused.1)")
        #expect(refused.1.contains("isv.invalid-app-id") && !refused.1.contains(#""sign""#))
        var conflicting = parameters
        conflicting["biz_content"] = #"{"out_trade_no":"OS-OTHER"}"#
        let twice = await sandbox.gateway(
            query: Array(FormEncoding.encode(conflicting).utf8), body: Array(FormEncoding.encode(biz).utf8))
        #expect(twice.1.contains("isv.invalid-parameter"), "a parameter given twice with two values is refused")
        let nameless = await sandbox.gateway(query: [], body: Array("app_id=x".utf8))
        #expect(nameless.1.hasPrefix(#"{"error_response":"#), "no method served: error_response")
    }

    @Test("a request signed with another key is refused by the sandbox")
    func forgedRequest() async throws {
        let sandbox = try AlipayFixture.sandbox()
        let otherKey = try _RSAKeyFactory.make()
        let forged = try AlipayRequestSigner(
            credentials: try AlipayCredentials(
                appID: AlipayFixture.appID, appPrivateKey: otherKey,
                alipayPublicKey: AlipayFixture.alipayKey.publicKey.pemRepresentation)
        ).orderString(
            for: AlipayAppPayOrder(
                outTradeNo: "F", amount: Money(amountMinor: 1, currency: .cny), subject: "s", notifyURL: "http://x"),
            at: AlipayFixture.now)
        await #expect(throws: SandboxAlipayError.self) { try await sandbox.open(orderString: forged) }
    }

    @Test("notifications are retried until `success`, following Alipay's schedule")
    func notificationRetries() async throws {
        let sandbox = try AlipayFixture.sandbox()
        let receiver = AlipayFixture.Receiver(failuresFirst: 3)
        try await AlipayFixture.live(sandbox: sandbox, receiver: receiver) { (base: String) async throws(any Error) in
            try await sandbox.open(orderString: try AlipayFixture.orderString("OS-2", notifyURL: base + "/notify"))
            await sandbox.settle()
            #expect(await sandbox.deliveries.map(\.attempt) == [1, 2, 3, 4])
            #expect(await sandbox.deliveries.map(\.accepted) == [false, false, false, true])
            #expect(await receiver.accepted.count == 1)
        }
    }

    @Test(
        "a merchant's server that refuses connections: each attempt fails as soon as the connection is refused, as the real providers' do, not at its 10-second deadline"
    )
    func notificationsToARefusingServer() async throws {
        // Each attempt may take five minutes: a client that connects again until the attempt's deadline cannot end
        // it sooner, one that does not ends it in milliseconds alone (in up to 13 s under the whole suite's load).
        let sandbox = try SandboxAlipay(
            appID: AlipayFixture.appID, alipayKey: AlipayFixture.alipayKey,
            appPublicKey: AlipayFixture.appKey.publicKey,
            timeScale: 0.00001, clock: FixedClock(date: AlipayFixture.now), notifyTimeout: .seconds(300))
        // Port 1 (tcpmux): nothing listens there on these machines, so each connection is refused.
        let order = try AlipayFixture.orderString("REFUSED", notifyURL: "http://127.0.0.1:1/n")
        let started = ContinuousClock.now
        try await sandbox.open(orderString: order)
        while await sandbox.deliveries.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let first = ContinuousClock.now - started
        guard first < .seconds(290) else {
            Issue.record("the first refused connection took \(first): retried until its deadline")
            return
        }
        await sandbox.settle()
        let attempts = await sandbox.deliveries
        #expect(attempts.count == SandboxAlipay.retrySchedule.count + 1 && attempts.allSatisfy { !$0.accepted })
    }

    @Test("dropped, duplicated, reordered and tampered notifications")
    func notificationFaults() async throws {
        let sandbox = try AlipayFixture.sandbox()
        let receiver = AlipayFixture.Receiver()
        try await AlipayFixture.live(sandbox: sandbox, receiver: receiver) { (base: String) async throws(any Error) in
            let notify = base + "/notify"
            await sandbox.injectNotificationFault(.drop)
            try await sandbox.open(orderString: try AlipayFixture.orderString("DROP", notifyURL: notify))
            await sandbox.injectNotificationFault(.duplicate)
            try await sandbox.open(orderString: try AlipayFixture.orderString("DUP", notifyURL: notify))
            await sandbox.settle()
            #expect(await receiver.accepted.map(\.outTradeNo) == ["DUP", "DUP"])

            await sandbox.injectNotificationFault(.reorder)
            try await sandbox.open(orderString: try AlipayFixture.orderString("FIRST", notifyURL: notify))
            await sandbox.settle()
            try await sandbox.open(orderString: try AlipayFixture.orderString("SECOND", notifyURL: notify))
            await sandbox.settle()
            #expect(await receiver.accepted.map(\.outTradeNo).suffix(2) == ["SECOND", "FIRST"])

            await sandbox.injectNotificationFault(.tamper)
            try await sandbox.open(orderString: try AlipayFixture.orderString("TAMPER", notifyURL: notify))
            await sandbox.settle()
            #expect(await receiver.rejected.count == SandboxAlipay.retrySchedule.count + 1)
            #expect(await receiver.rejected.allSatisfy { $0 == .badSignature })
            #expect(await !receiver.accepted.map(\.outTradeNo).contains("TAMPER"))
            #expect(await !receiver.accepted.map(\.outTradeNo).contains("DROP"))
        }
    }
}

extension AlipaySandboxTests {
    @Test("held-back notifications go to their own trade's notify_url after the one that overtook them, however many")
    func heldNotificationsKeepTheirURL() async throws {
        let sandbox = try AlipayFixture.sandbox()
        let sent = Mutex<[(url: String, body: String)]>([])
        await sandbox.setNotificationSink { url, body in
            sent.withLock { $0.append((url, body)) }
            return true
        }
        for held in ["HELD1", "HELD2"] {
            await sandbox.injectNotificationFault(.reorder)
            try await sandbox.open(
                orderString: try AlipayFixture.orderString(held, notifyURL: "http://\(held.lowercased()).example/n"))
        }
        await sandbox.settle()
        #expect(sent.withLock { $0 }.isEmpty)
        try await sandbox.open(orderString: try AlipayFixture.orderString("NEXT", notifyURL: "http://next.example/n"))
        await sandbox.settle()
        let delivered = sent.withLock { $0 }.map { notice in
            let field = notice.body.split(separator: "&").first { $0.hasPrefix("out_trade_no=") }
            return "\(field?.dropFirst("out_trade_no=".count) ?? "?") -> \(notice.url)"
        }
        #expect(delivered.first == "NEXT -> http://next.example/n")
        #expect(
            Set(delivered.dropFirst()) == ["HELD1 -> http://held1.example/n", "HELD2 -> http://held2.example/n"],
            "\(delivered)")
    }
}

/// A fresh RSA key as PEM.
enum _RSAKeyFactory {
    static func make() throws -> String {
        try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
    }
}

@Suite("Sandbox Alipay fault requests")
struct AlipayFaultRequestTests {
    @Test("faults queued over HTTP are parsed strictly")
    func parse() async throws {
        let sandbox = try AlipayFixture.sandbox()
        try await AlipayFixture.live(sandbox: sandbox, receiver: AlipayFixture.Receiver()) {
            (base: String) async throws(any Error) in
            let ok = try await Self.post(
                base, #"{"notifications":["drop","delay_ms:5"],"gateway":["server_error","timeout_ms:10"]}"#)
            #expect(ok.0 == 200)
            let pending = await sandbox.pendingFaults
            #expect(pending.notifications == [.drop, .delay(.milliseconds(5))])
            #expect(pending.gateway == [.serverError, .timeout(.milliseconds(10))])
            #expect(try await Self.post(base, #"{"notifications":["explode"]}"#).0 == 400)
            #expect(try await Self.post(base, #"{"gateway":["timeout_ms:-1"]}"#).0 == 400)
            #expect(try await Self.post(base, "not json").0 == 400)
        }
    }

    static func post(_ base: String, _ body: String) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: base + "/alipay/faults")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: AlipayFixture.deadline)
        var bytes = try await response.body.collect(upTo: 65536)
        return (Int(response.status.code), bytes.readString(length: bytes.readableBytes) ?? "")
    }
}
