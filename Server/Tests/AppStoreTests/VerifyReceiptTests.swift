import ChannelSupport
import Foundation
import Synchronization
import Testing

@testable import AppStore

/// A transport that answers from a script and records where each call went.
final class ScriptedTransport: ProviderTransport {
    let answers: Mutex<[(Int, String)]>
    let calls = Mutex<[String]>([])

    init(_ answers: [(Int, String)]) {
        self.answers = Mutex(answers)
    }

    func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> ProviderHTTPResponse
    {
        calls.withLock { $0.append(url.contains("sandbox") ? "sandbox" : "production") }
        let (status, text) = answers.withLock { $0.isEmpty ? (599, "") : $0.removeFirst() }
        if status == 599 { throw URLError(.timedOut) }
        return ProviderHTTPResponse(status: status, headers: [:], body: Array(text.utf8))
    }
}

@Suite("verifyReceipt: environments, retries, typed statuses, tolerant decoding")
struct VerifyReceiptTests {
    static func client(_ transport: ScriptedTransport) -> VerifyReceiptClient {
        VerifyReceiptClient(
            sharedSecret: "secret", transport: transport,
            retry: RetryPolicy(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(1)))
    }

    static func status(_ code: Int, retryable: Bool = false) -> (Int, String) {
        (200, #"{"status":\#(code)\#(retryable ? #","is-retryable":true"# : "")}"#)
    }

    @Test("production first; 21007 goes to the sandbox; 21008 from the sandbox goes back once, then stops")
    func environments() async throws {
        let sandboxAnswer = Self.status(0).1.replacingOccurrences(of: "}", with: #","environment":"Sandbox"}"#)
        let redirected = ScriptedTransport([Self.status(21007), (200, sandboxAnswer)])
        #expect(try await Self.client(redirected).verify(receiptData: "MIIT").environment == "Sandbox")
        #expect(redirected.calls.withLock { $0 } == ["production", "sandbox"])

        let pingPong = ScriptedTransport([Self.status(21007), Self.status(21008)])
        await #expect(throws: VerifyReceiptError.status(VerifyReceiptStatus(21008))) {
            try await Self.client(pingPong).verify(receiptData: "x")
        }
        #expect(pingPong.calls.withLock { $0 } == ["production", "sandbox"])
    }

    @Test("21005, 21100–21199, is-retryable, 5xx and timeouts are retried; 21002/21003/21004/21010 are not")
    func retries() async throws {
        let transient = ScriptedTransport([Self.status(21005), (503, ""), Self.status(0)])
        #expect(try await Self.client(transient).verify(receiptData: "x").status == 0)
        #expect(transient.calls.withLock { $0.count } == 3)
        let internalError = ScriptedTransport([Self.status(21150), (599, ""), Self.status(0)])
        #expect(try await Self.client(internalError).verify(receiptData: "x").status == 0)
        let flagged = ScriptedTransport([Self.status(21199, retryable: true), Self.status(0)])
        #expect(try await Self.client(flagged).verify(receiptData: "x").status == 0)
        for permanent in [21002, 21003, 21004, 21010] {
            let transport = ScriptedTransport([Self.status(permanent, retryable: true), Self.status(0)])
            await #expect(throws: VerifyReceiptError.status(VerifyReceiptStatus(permanent))) {
                try await Self.client(transport).verify(receiptData: "x")
            }
            #expect(transport.calls.withLock { $0.count } == 1)
        }
        let down = ScriptedTransport([Self.status(21005), Self.status(21005), Self.status(21005)])
        await #expect(throws: VerifyReceiptError.status(VerifyReceiptStatus(21005))) {
            try await Self.client(down).verify(receiptData: "x")
        }
        // 21006: a valid receipt whose subscription expired is an answer.
        #expect(try await Self.client(ScriptedTransport([Self.status(21006)])).verify(receiptData: "x").status == 21006)
    }

    @Test("an HTTP 4xx is final after one request; 429 is retried")
    func httpRefusals() async throws {
        for status in [400, 401, 403, 404] {
            let transport = ScriptedTransport([(status, ""), Self.status(0)])
            await #expect(throws: VerifyReceiptError.refused(status: status)) {
                try await Self.client(transport).verify(receiptData: "x")
            }
            #expect(transport.calls.withLock { $0.count } == 1)
        }
        let limited = ScriptedTransport([(429, ""), Self.status(0)])
        #expect(try await Self.client(limited).verify(receiptData: "x").status == 0)
        #expect(limited.calls.withLock { $0.count } == 2)
    }

    @Test("every status has an English and a Chinese message")
    func messages() {
        for code in [21000, 21001, 21002, 21003, 21004, 21005, 21006, 21007, 21008, 21009, 21010, 21100, 21199, 29999] {
            let status = VerifyReceiptStatus(code)
            #expect(!status.english.isEmpty && !status.chinese.isEmpty && status.english != status.chinese)
        }
        #expect(VerifyReceiptStatus(21150).isRetryable && !VerifyReceiptStatus(21002).isRetryable)
    }

    @Test(
        "the shared verifyReceipt samples decode, numbers given as strings or as numbers",
        .enabled(if: Vectors.available))
    func samples() throws {
        func load(_ name: String) throws -> VerifyReceiptResponse {
            try VerifyReceiptResponse(
                body: Array(try Data(contentsOf: Vectors.directory.appendingPathComponent("verifyreceipt/\(name)"))))
        }
        let second = try load("itunes-iap_itunes_autorenew_response2.json")
        #expect(second.status == 0 && second.environment == "Sandbox")
        #expect(
            second.inApp.count == 13 && second.latestReceiptInfo.count == 18 && second.pendingRenewalInfo.count == 1)
        #expect(Tolerant.int(second.receipt?["receipt_creation_date_ms"]) == 1_500_973_280_000)
        #expect(
            Tolerant.string(second.receipt?["bundle_id"]) == "com.example.app"
                && Tolerant.int(second.receipt?["app_item_id"]) == 0)
        let last = try #require(second.inApp.last)
        #expect(last.quantity == 1 && last.productID == "testproduct" && last.transactionID == "1000000318407192")
        #expect(last.originalTransactionID == "1000000318012065" && last.purchaseDateMS == 1_500_973_279_000)
        #expect(
            last.expiresDateMS == 1_500_973_579_000 && last.webOrderLineItemID == "1000000035713887"
                && last.isTrialPeriod == false)
        let latest = try #require(second.latestReceiptInfo.last)
        #expect(latest.transactionID == "1000000318420598" && latest.expiresDateMS == 1_500_975_210_000)
        #expect(Tolerant.int(second.pendingRenewalInfo[0]["expiration_intent"]) == 1)
        #expect(second.inApp.map(\.transactionID) == second.latestReceiptInfo.prefix(13).map(\.transactionID))

        let third = try load("itunes-iap_itunes_autorenew_response3.json")
        #expect(
            third.status == 0 && third.inApp.first?.expiresDateMS == 1_506_524_970_000
                && third.inApp.first?.quantity == 1)
        let first = try load("itunes-iap_itunes_autorenew_response1.json")
        #expect(first.inApp.count == 2 && first.inApp[0].productID == "org.itunesiap")
        let legacy = try load("itunes-iap_itunes_autorenew_response_legacy.json")
        #expect(legacy.latestReceiptInfo.first?.expiresDateMS == 1_354_436_154_000)
        let legacy2 = try load("itunes-iap_itunes_response_legacy2.json")
        #expect(
            legacy2.status == 0 && legacy2.inApp.first?.productID == "TestProduction1"
                && legacy2.inApp.first?.transactionID == "1000000012345678")
        #expect(throws: VerifyReceiptError.self) { try VerifyReceiptResponse(body: Array("[]".utf8)) }
        #expect(throws: VerifyReceiptError.self) { try VerifyReceiptResponse(body: Array(#"{"status":"ok"}"#.utf8)) }
    }
}
