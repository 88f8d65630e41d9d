import ChannelSupport
import Foundation
import OrderSafeModel
import Synchronization
import Testing
import _CryptoExtras

@testable import Alipay

@Suite("Alipay: hostile and broken input")
struct AlipayNegativeTests {
    static let fields: [String: String] = [
        "notify_id": "n1", "notify_type": "trade_status_sync", "notify_time": "2026-11-22 10:00:00",
        "app_id": AlipayFixture.appID,
        "seller_id": "2088000000000001", "out_trade_no": "OS20261122-AAAA", "trade_no": "2026112222001",
        "trade_status": "TRADE_SUCCESS",
        "total_amount": "99.00", "charset": "utf-8", "subject": "礼盒 + box",
    ]
    static let verifier = AlipayNotificationVerifier(credentials: AlipayFixture.credentials)
    static let expectation = AlipayNotification.Expectation(
        appID: AlipayFixture.appID, sellerID: "2088000000000001", outTradeNo: "OS20261122-AAAA",
        amount: Money(amountMinor: 9900, currency: .cny))

    static func verify(_ body: String) throws(AlipayNotificationError) -> AlipayNotification {
        try verifier.verify(body: Array(body.utf8))
    }

    @Test("a correctly signed notification verifies and matches the order")
    func valid() throws {
        let notification = try Self.verify(try AlipayFixture.alipaySigner.notificationBody(Self.fields))
        try notification.check(against: Self.expectation)
        #expect(notification.subject == "礼盒 + box")
    }

    @Test(
        "tampering any field breaks the signature",
        arguments: ["total_amount", "out_trade_no", "trade_status", "app_id", "subject"])
    func tamper(field: String) throws {
        let body = try AlipayFixture.alipaySigner.notificationBody(Self.fields)
        var parsed = try FormEncoding.parse(Array(body.utf8))
        parsed[field] = (parsed[field] ?? "") + "0"
        #expect(throws: AlipayNotificationError.badSignature) { try Self.verify(FormEncoding.encode(parsed)) }
    }

    @Test("an extra field added after signing breaks the signature; an empty one does not count")
    func extraField() throws {
        let body = try AlipayFixture.alipaySigner.notificationBody(Self.fields)
        #expect(throws: AlipayNotificationError.badSignature) { try Self.verify(body + "&refund_fee=99.00") }
        #expect(try Self.verify(body + "&memo=").outTradeNo == "OS20261122-AAAA")
    }

    @Test("duplicated fields are refused outright, whatever the signature")
    func duplicated() throws {
        let body = try AlipayFixture.alipaySigner.notificationBody(Self.fields)
        #expect(throws: AlipayNotificationError.malformedBody(.duplicateField("trade_status"))) {
            try Self.verify(body + "&trade_status=TRADE_SUCCESS")
        }
    }

    @Test(
        "missing required fields are named",
        arguments: ["trade_no", "out_trade_no", "total_amount", "trade_status", "notify_id"])
    func missing(field: String) throws {
        var fields = Self.fields
        fields[field] = nil
        #expect(throws: AlipayNotificationError.missingField(field)) {
            try Self.verify(try AlipayFixture.alipaySigner.notificationBody(fields))
        }
    }

    @Test("no signature, a non-RSA2 sign_type, or a signature by another key are refused")
    func signatures() throws {
        var unsigned = Self.fields
        unsigned["sign_type"] = "RSA2"
        #expect(throws: AlipayNotificationError.missingSignature) { try Self.verify(FormEncoding.encode(unsigned)) }
        let rsa1 = try AlipayFixture.alipaySigner.notificationBody(Self.fields).replacingOccurrences(
            of: "sign_type=RSA2", with: "sign_type=RSA")
        #expect(throws: AlipayNotificationError.unsupportedSignType("RSA")) { try Self.verify(rsa1) }
        let impostor = AlipaySideSigner(privateKey: AlipayFixture.appKey)
        #expect(throws: AlipayNotificationError.badSignature) {
            try Self.verify(try impostor.notificationBody(Self.fields))
        }
        #expect(throws: AlipayNotificationError.badSignature) {
            try Self.verify(
                try AlipayFixture.alipaySigner.notificationBody(Self.fields).replacingOccurrences(
                    of: "sign=", with: "sign=%21"))
        }
    }

    @Test("GBK bytes, broken escapes, bare words and huge bodies are refused without a crash")
    func malformed() throws {
        let gbk: [UInt8] = Array("subject=".utf8) + [0xC0, 0xF1, 0xBA, 0xD0] + Array("&sign=x".utf8)
        #expect(throws: AlipayNotificationError.malformedBody(.notUTF8(field: "subject"))) {
            try Self.verifier.verify(body: gbk)
        }
        #expect(throws: AlipayNotificationError.malformedBody(.badPercentEncoding(field: "a"))) {
            try Self.verify("a=%G1&sign=x")
        }
        #expect(throws: AlipayNotificationError.malformedBody(.badPercentEncoding(field: "a"))) {
            try Self.verify("a=%4")
        }
        #expect(throws: AlipayNotificationError.malformedBody(.malformedPair("justaword"))) {
            try Self.verify("justaword&sign=x")
        }
        #expect(throws: AlipayNotificationError.malformedBody(.malformedPair("=x"))) { try Self.verify("=x") }
        let huge = "subject=" + String(repeating: "a", count: 70_000)
        #expect(throws: AlipayNotificationError.malformedBody(.tooLarge(limit: 65_536))) { try Self.verify(huge) }
        let many = (0..<200).map { "f\($0)=1" }.joined(separator: "&")
        #expect(throws: AlipayNotificationError.malformedBody(.tooManyFields(limit: 128))) { try Self.verify(many) }
        #expect(throws: AlipayNotificationError.missingSignature) { try Self.verify("") }
    }

    @Test(
        "amount formats: 0.10 and 0.1 are the same 10 fen; anything odd is refused",
        arguments: [
            ("0.10", Int64(10)), ("0.1", 10), ("1", 100), ("1.0", 100), ("99.00", 9900), ("0.01", 1),
            ("100000000.00", 10_000_000_000),
        ])
    func amounts(text: String, fen: Int64) {
        #expect(AlipayAmount.fen(text) == fen)
    }

    @Test(
        "malformed amounts",
        arguments: ["", ".5", "1.", "1.234", "-1.00", "+1", "1e2", "0x10", "1,00", " 1.00", "１.00", "99999999999999"])
    func badAmounts(text: String) {
        #expect(AlipayAmount.fen(text) == nil)
    }

    @Test("a notification whose amount, order, app or seller is not ours fails the business check")
    func businessChecks() throws {
        func notification(_ change: (inout [String: String]) -> Void) throws -> AlipayNotification {
            var fields = Self.fields
            change(&fields)
            return try Self.verify(try AlipayFixture.alipaySigner.notificationBody(fields))
        }
        #expect(
            throws: AlipayNotificationError.amountMismatch(
                expected: Money(amountMinor: 9900, currency: .cny), got: Money(amountMinor: 9899, currency: .cny))
        ) {
            try notification { $0["total_amount"] = "98.99" }.check(against: Self.expectation)
        }
        #expect(try notification { $0["total_amount"] = "99.0" }.totalAmount == Self.expectation.amount)
        #expect(throws: AlipayNotificationError.unknownOrder("OS-OTHER")) {
            try notification { $0["out_trade_no"] = "OS-OTHER" }.check(against: Self.expectation)
        }
        #expect(throws: AlipayNotificationError.wrongAppID("2021999")) {
            try notification { $0["app_id"] = "2021999" }.check(against: Self.expectation)
        }
        #expect(throws: AlipayNotificationError.wrongSeller("2088999")) {
            try notification { $0["seller_id"] = "2088999" }.check(against: Self.expectation)
        }
        #expect(throws: AlipayNotificationError.invalidField("total_amount", "9.999")) {
            try notification { $0["total_amount"] = "9.999" }
        }
        #expect(throws: AlipayNotificationError.invalidField("trade_status", "PAID")) {
            try notification { $0["trade_status"] = "PAID" }
        }
    }

    @Test("keys load from PKCS#1 and PKCS#8 PEM and from bare base64 with line breaks")
    func keyForms() throws {
        let key = AlipayFixture.appKey
        let pkcs1Base64 = key.derRepresentation.base64EncodedString(options: .lineLength64Characters)
        let pkcs8PEM = key.pkcs8PEMRepresentation
        let pkcs8Base64 = key.pkcs8DERRepresentation.base64EncodedString()
        let alipay = AlipayFixture.alipayKey.publicKey
        for privateText in [pkcs8PEM, pkcs8Base64, key.pemRepresentation, pkcs1Base64] {
            for publicText in [alipay.pemRepresentation, alipay.derRepresentation.base64EncodedString()] {
                let credentials = try AlipayCredentials(
                    appID: "a", appPrivateKey: privateText, alipayPublicKey: publicText)
                #expect(RSA2.verify(try credentials.sign("x"), over: Array("x".utf8), with: key.publicKey))
            }
        }
        #expect(throws: AlipayKeyError.unreadable(what: "the app private key")) {
            try AlipayCredentials(appID: "a", appPrivateKey: "not a key", alipayPublicKey: alipay.pemRepresentation)
        }
        #expect(throws: AlipayKeyError.appPublicKeyConfiguredAsAlipayKey) {
            try AlipayCredentials(appID: "a", appPrivateKey: pkcs8PEM, alipayPublicKey: key.publicKey.pemRepresentation)
        }
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        #expect(throws: AlipayKeyError.tooShort(what: "the app private key", bits: 1024)) {
            try AlipayCredentials(
                appID: "a", appPrivateKey: small.pemRepresentation, alipayPublicKey: alipay.pemRepresentation)
        }
    }

    @Test("the order string is deterministic for a pinned clock, in Beijing time, with amounts from fen")
    func orderString() throws {
        let order = AlipayAppPayOrder(
            outTradeNo: "OS20261122-AAAA", amount: Money(amountMinor: 10, currency: .cny), subject: "礼盒 & box",
            notifyURL: "https://merchant.example/v1/notify/alipay",
            expiresAt: AlipayFixture.now.addingTimeInterval(1800))
        let signer = AlipayRequestSigner(credentials: AlipayFixture.credentials)
        let first = try signer.orderString(for: order, at: AlipayFixture.now)
        #expect(first == (try signer.orderString(for: order, at: AlipayFixture.now)))
        let fields = try FormEncoding.parse(Array(first.utf8))
        // 1_795_000_000 is 2026-11-18 11:06:40 UTC, so 19:06:40 in Beijing.
        #expect(fields["timestamp"] == "2026-11-18 19:06:40")
        #expect(fields["method"] == "alipay.trade.app.pay")
        #expect(fields["sign_type"] == "RSA2")
        let biz = try JSONSerialization.jsonObject(with: Data(fields["biz_content"]!.utf8)) as! [String: String]
        #expect(biz["total_amount"] == "0.10")
        #expect(biz["product_code"] == "QUICK_MSECURITY_PAY")
        #expect(biz["time_expire"] == "2026-11-18 19:36:40")
        #expect(biz["subject"] == "礼盒 & box")
        let content = SignContent.make(fields, excluding: SignContent.requestExclusions)
        #expect(RSA2.verify(fields["sign"]!, over: Array(content.utf8), with: AlipayFixture.appKey.publicKey))
        #expect(throws: AlipayAmountError.unsupportedCurrency(.usd)) {
            try signer.orderString(
                for: AlipayAppPayOrder(
                    outTradeNo: "x", amount: Money(amountMinor: 1, currency: .usd), subject: "s", notifyURL: "u"),
                at: AlipayFixture.now)
        }
    }

    @Test("raw JSON member extraction honours quotes and escapes and refuses malformed text")
    func rawJSON() throws {
        let body = #"{"a_response":{"msg":"he said \"}\", ok","n":[1,{"x":"]"}]},"sign":"abc"}"#
        let members = try RawJSONMembers.extract(Array(body.utf8))
        #expect(
            String(decoding: members["a_response"]!, as: UTF8.self) == #"{"msg":"he said \"}\", ok","n":[1,{"x":"]"}]}"#
        )
        #expect(String(decoding: members["sign"]!, as: UTF8.self) == #""abc""#)
        for bad in ["", "[]", "{", #"{"a":}"#, #"{"a":1"#, #"{"a":"x}"#, #"{"a":1} extra"#, #"{"a":tru}"#] {
            #expect(throws: RawJSONMembers.Error.self) { try RawJSONMembers.extract(Array(bad.utf8)) }
        }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: RawJSONMembers.Error.tooDeep) { try RawJSONMembers.extract(Array(#"{"a":\#(deep)}"#.utf8)) }
    }

    @Test("client result codes: typed, bilingual, and which ones need a server query")
    func resultStatus() {
        #expect(AlipayResultStatus(rawValue: "9000") == .success)
        #expect(AlipayResultStatus.success.requiresServerQuery)
        #expect(AlipayResultStatus.unknown.requiresServerQuery)
        #expect(!AlipayResultStatus.userCancelled.requiresServerQuery)
        #expect(AlipayResultStatus.userCancelled.chineseMessage == "用户中途取消")
        #expect(AlipayResultStatus.allCases.allSatisfy { !$0.englishMessage.isEmpty && !$0.chineseMessage.isEmpty })
        #expect(AlipayResultStatus(rawValue: "1234") == nil)
    }
}

/// A gateway that answers each call with the next HTTP status, counting calls.
final class StatusScriptedAlipay: AlipayTransport {
    let statuses: Mutex<[Int]>
    let calls = Mutex(0)

    init(_ statuses: [Int]) {
        self.statuses = Mutex(statuses)
    }

    func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
        calls.withLock { $0 += 1 }
        let status = statuses.withLock { $0.isEmpty ? 599 : $0.removeFirst() }
        if status == 599 { throw URLError(.timedOut) }
        return (status, Array("<html>error</html>".utf8))
    }

    func get(url: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
        try await post(url: url, form: "", timeout: timeout)
    }
}

@Suite("Alipay gateway client: what is retried")
struct AlipayGatewayRetryTests {
    static func client(_ transport: StatusScriptedAlipay) -> AlipayGatewayClient {
        AlipayGatewayClient(
            credentials: AlipayFixture.credentials, transport: transport,
            retry: .init(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(1)),
            clock: FixedClock(date: AlipayFixture.now),
            sleep: { _ in })
    }

    @Test("an HTTP 4xx stops after one request and says so; 5xx, 429 and timeouts use every attempt")
    func refusalsAreFinal() async {
        for status in [400, 403, 404] {
            let transport = StatusScriptedAlipay([status, status, status])
            await #expect(throws: AlipayGatewayError.refused(status: status)) {
                try await Self.client(transport).queryTrade(outTradeNo: "OS1")
            }
            #expect(transport.calls.withLock { $0 } == 1)
        }
        for script in [[500, 502, 503], [429, 429, 429], [599, 599, 599]] {
            let transport = StatusScriptedAlipay(script)
            await #expect(throws: AlipayGatewayError.self) {
                try await Self.client(transport).queryTrade(outTradeNo: "OS1")
            }
            #expect(transport.calls.withLock { $0 } == 3)
        }
    }
}

/// A bill's download address comes in Alipay's answer: a URL we did not choose, fetched only on Alipay's bill hosts.
@Suite("Alipay bill downloads: Alipay's bill hosts only")
struct AlipayBillAddressTests {
    static func client(gateway: String, _ transport: StatusScriptedAlipay) -> AlipayGatewayClient {
        AlipayGatewayClient(
            credentials: AlipayFixture.credentials, gatewayURL: gateway, transport: transport,
            retry: .init(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(1)),
            clock: FixedClock(date: AlipayFixture.now), sleep: { _ in })
    }

    @Test(
        "loopback, another port, a Unix socket, user info, another host or plain HTTP elsewhere are never fetched; Alipay's own bill host is"
    )
    func hostileAddresses() async throws {
        let production = AlipayGatewayClient.productionGateway
        for url in [
            "http://127.0.0.1:5432/downloadBillFile.resource", "http+unix://%2Frun%2Fdocker.sock/containers",
            "https+unix://%2Frun%2Fx.sock/", "http://dwbillcenter.alipay.com:8080/downloadBillFile.resource",
            "http://openapi.alipay.com.evil.example/bill", "https://alipay.com@evil.example/bill",
            "http://www.alipay.com/bill", "ftp://dwbillcenter.alipay.com/bill", "file:///etc/passwd",
            "https://evil.example/downloadBillFile.resource", "//dwbillcenter.alipay.com/x", "not a url",
        ] {
            let transport = StatusScriptedAlipay([200])
            await #expect(throws: AlipayGatewayError.self, "\(url)") {
                try await Self.client(gateway: production, transport).downloadBill(url: url)
            }
            #expect(transport.calls.withLock { $0 } == 0, "\(url) was fetched")
        }
        // Alipay's documented bill host (plain HTTP, as every published answer names it), and https on its domain.
        for url in [
            "http://dwbillcenter.alipay.com/downloadBillFile.resource?bizType=trade&userId=20887210029193170156&fileType=csv.zip&bizDates=20190808",
            "https://dwbillcenter.alipay.com/downloadBillFile.resource?bizType=trade",
        ] {
            let transport = StatusScriptedAlipay([200])
            #expect(try await Self.client(gateway: production, transport).downloadBill(url: url).isEmpty == false)
            #expect(transport.calls.withLock { $0 } == 1)
        }
        // The built-in sandbox: its gateway's own origin, and nothing else on that host.
        let sandbox = "http://127.0.0.1:8080/sandbox/alipay/gateway.do"
        let served = StatusScriptedAlipay([200])
        _ = try? await Self.client(gateway: sandbox, served).downloadBill(
            url: "http://127.0.0.1:8080/sandbox/alipay/downloadBillFile.resource?bizDates=20261118")
        #expect(served.calls.withLock { $0 } == 1)
        let other = StatusScriptedAlipay([200])
        _ = try? await Self.client(gateway: sandbox, other).downloadBill(url: "http://127.0.0.1:6379/")
        #expect(other.calls.withLock { $0 } == 0)
    }
}
