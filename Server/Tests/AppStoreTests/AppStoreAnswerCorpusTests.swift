import ChannelSupport
import Foundation
import Testing

@testable import AppStore

/// The App Store Server API's answers as Apple's own library tests them (`models/*.json` of
/// apple/app-store-server-library-swift, read in place from `../shared/vectors/appstore`), each through the client's
/// reading of it: the pages, their revision or pagination token, and Apple's error bodies typed.
@Suite("App Store Server API: Apple's published answers", .enabled(if: Vectors.available))
struct AppStoreAnswerCorpusTests {
    static func answer(_ model: String, status: Int = 200) throws -> FakeServerAPI {
        FakeServerAPI([(status, [:], try Vectors.text("models/\(model).json"))])
    }

    @Test("transaction info, history, refund history, notification history and order lookup pages")
    func pages() async throws {
        #expect(
            try await AppStoreServerAPITests.client(try Self.answer("transactionInfoResponse"))
                .transactionInfo(transactionID: "1234") == "signed_transaction_info_value")
        for model in [
            "transactionHistoryResponse", "transactionHistoryResponseWithMalformedEnvironment",
            "transactionHistoryResponseWithMalformedAppAppleId",
        ] {
            // The page's bundle, app id and environment are Apple's to state; the client reads the signed
            // transactions and the revision, which the verifier then checks one by one.
            let page = try await AppStoreServerAPITests.client(try Self.answer(model))
                .transactionHistory(transactionID: "1234")
            #expect(page.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
            #expect(page.revision == "revision_output" && page.hasMore)
        }
        let refunds = try await AppStoreServerAPITests.client(try Self.answer("getRefundHistoryResponse"))
            .refundHistory(transactionID: "1234")
        #expect(refunds.signedTransactions == ["signed_transaction_one", "signed_transaction_two"] && refunds.hasMore)
        let notifications = try await AppStoreServerAPITests.client(try Self.answer("getNotificationHistoryResponse"))
            .notificationHistory(startDate: 1_698_148_900_000, endDate: 1_698_148_950_000)
        #expect(notifications.signedPayloads == ["signed_payload_one", "signed_payload_two"])
        #expect(notifications.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a" && notifications.hasMore)
        let lookup = try await AppStoreServerAPITests.client(try Self.answer("lookupOrderIdResponse"))
            .lookUpOrderID("W002182")
        #expect(
            lookup.status == 1 && lookup.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
    }

    @Test(
        "Apple's error bodies are typed with their code and message; only the retryable ones are tried again",
        arguments: [
            ("transactionIdNotFoundError", 404, 4_040_010, "Transaction id not found.", false),
            ("invalidTransactionIdError", 400, 4_000_006, "Invalid transaction id.", false),
            ("apiUnknownError", 400, 9_990_000, "Testing error.", false),
            ("apiException", 500, 5_000_000, "An unknown error occurred.", true),
        ])
    func errors(model: String, status: Int, code: Int, message: String, retried: Bool) async throws {
        let body = try Vectors.text("models/\(model).json")
        let fake = FakeServerAPI(Array(repeating: (status, [:], body), count: 3))
        await #expect(throws: AppStoreServerAPIError.api(status: status, code: code, message: message)) {
            try await AppStoreServerAPITests.client(fake).transactionInfo(transactionID: "1234")
        }
        #expect(fake.requests.withLock { $0.count } == (retried ? 3 : 1))
    }

    @Test("Apple's 429 body through every attempt is a rate limit, Retry-After kept")
    func rateLimited() async throws {
        let body = try Vectors.text("models/apiTooManyRequestsException.json")
        let fake = FakeServerAPI(Array(repeating: (429, ["Retry-After": "2"], body), count: 3))
        await #expect(throws: AppStoreServerAPIError.rateLimited(retryAfter: 2)) {
            try await AppStoreServerAPITests.client(fake).transactionInfo(transactionID: "1234")
        }
    }
}
