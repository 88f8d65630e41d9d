import Foundation
import Ledger
import LedgerTestSupport
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

/// The App Store submission path writes its JSON without `JSONEncoder`: the answer apps parse, and the inbox copy
/// whose digest finds a resend (written by `JSONEncoder` before, so a resend of an entry stored by an earlier build
/// must hash the same). Each must be the very bytes `JSONEncoder` writes.
@Suite("App Store submissions: JSON written directly")
struct SubmissionJSONTests {
    typealias Random = WebhookPayloadTests

    static func order(_ random: inout SeededRandom) -> Order {
        Order(
            orderNo: Random.text(&random), orderUUID: UUID(), userID: Random.text(&random),
            productID: Random.text(&random),
            channel: Channel.builtIn.randomElement(using: &random)!,
            status: OrderStatus.allCases.randomElement(using: &random)!,
            amount: Money(amountMinor: Int64.random(in: .min ... .max, using: &random), currency: .usd),
            createdAt: Random.date(&random), updatedAt: Random.date(&random), sandbox: Bool.random(using: &random))
    }

    static func maybe(_ random: inout SeededRandom) -> String? {
        Bool.random(using: &random) ? Random.text(&random) : nil
    }

    @Test("2,000 random answers are byte for byte what the API's JSONEncoder writes")
    func answers() throws {
        var random = SeededRandom(state: 20_261_125)
        let encoder = OrderSafeJSON.encoder()
        for _ in 0..<2_000 {
            let results = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                AppStoreTransactionResult(
                    transactionID: Random.text(&random), verdict: Bool.random(using: &random) ? .recorded : .rejected,
                    order: Bool.random(using: &random) ? Self.order(&random) : nil,
                    error: Bool.random(using: &random)
                        ? .init(code: Random.text(&random), message: Random.text(&random)) : nil)
            }
            let response = AppStoreSubmissionResponse(transactions: results)
            let written = String(decoding: response.json, as: UTF8.self)
            let expected = String(decoding: try encoder.encode(response), as: UTF8.self)
            #expect(written == expected)
            if written != expected { return }
        }
    }

    @Test(
        "2,000 random submissions and their sender are stored as JSONEncoder with sorted keys writes them (slashes escaped)"
    )
    func inboxCopies() throws {
        var random = SeededRandom(state: 20_261_126)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for _ in 0..<2_000 {
            let submission = AppStoreSubmission(
                signedTransaction: Self.maybe(&random), receipt: Self.maybe(&random),
                transactionID: Self.maybe(&random),
                applicationUsername: Self.maybe(&random))
            let written = String(decoding: submission.inboxJSON, as: UTF8.self)
            let expected = String(decoding: try encoder.encode(submission), as: UTF8.self)
            #expect(written == expected)
            let headers = [Random.text(&random): Random.text(&random)]
            let writtenHeaders = try SQLLedger.storedHeaders(headers)
            let expectedHeaders = String(decoding: try encoder.encode(headers), as: UTF8.self)
            #expect(writtenHeaders == expectedHeaders)
            if written != expected || writtenHeaders != expectedHeaders { return }
        }
    }
}
