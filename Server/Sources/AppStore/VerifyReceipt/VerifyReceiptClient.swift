import ChannelSupport
import Foundation
import Logging

/// The legacy `verifyReceipt` endpoint, for apps still sending StoreKit 1 receipts: production first, the sandbox
/// on 21007 (and production again on 21008 from the sandbox); the shared secret and `exclude-old-transactions`;
/// retries with backoff on network failures, 5xx, 21005, 21009, 21100–21199 and `is-retryable`, never on
/// 21002/21003/21004/21010. Status 21006 (valid, subscription expired) is an answer, not an error.
public struct VerifyReceiptClient: Sendable {
    public static let productionURL = "https://buy.itunes.apple.com/verifyReceipt"
    public static let sandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"

    let sharedSecret: String?
    let excludeOldTransactions: Bool
    let productionURL: String
    let sandboxURL: String
    let transport: any ProviderTransport
    let retry: RetryPolicy
    let sleep: @Sendable (Duration) async throws -> Void
    let logger: Logger

    public init(
        sharedSecret: String?, excludeOldTransactions: Bool = false, productionURL: String = productionURL,
        sandboxURL: String = sandboxURL, transport: any ProviderTransport = HTTPClientProviderTransport(),
        retry: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = Logger(label: "ordersafe.verifyreceipt")
    ) {
        self.sharedSecret = sharedSecret
        self.excludeOldTransactions = excludeOldTransactions
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.transport = transport
        self.retry = retry
        self.sleep = sleep
        self.logger = logger
    }

    /// Verifies base64 receipt data, following Apple's environment redirections (at most one each way).
    public func verify(receiptData: String) async throws(VerifyReceiptError) -> VerifyReceiptResponse {
        var body: [String: Any] = ["receipt-data": receiptData]
        body["password"] = sharedSecret
        if excludeOldTransactions { body["exclude-old-transactions"] = true }
        let bytes = Array((try? JSONSerialization.data(withJSONObject: body)) ?? Data())
        var url = productionURL
        var visited: Set<String> = []
        while true {
            visited.insert(url)
            let response = try await post(url: url, body: bytes)
            switch response.status {
            case 0, 21006:
                return response
            case 21007 where !visited.contains(sandboxURL):
                url = sandboxURL
            case 21008 where !visited.contains(productionURL):
                url = productionURL
            default:
                throw .status(VerifyReceiptStatus(response.status))
            }
        }
    }

    /// One environment, with retries.
    private func post(url: String, body: [UInt8]) async throws(VerifyReceiptError) -> VerifyReceiptResponse {
        try await retry.run(
            sleep: sleep,
            onRetry: { attempt, error in
                logger.warning(
                    "verifyReceipt failed", metadata: ["url": "\(url)", "attempt": "\(attempt)", "error": "\(error)"])
            }
        ) { () async -> Attempt<VerifyReceiptResponse, VerifyReceiptError> in
            let answer: ProviderHTTPResponse
            do {
                answer = try await transport.send(
                    method: "POST", url: url, headers: ["Content-Type": "application/json"], body: body,
                    timeout: retry.timeout)
            } catch {
                return .transportFailure(error) { .unavailable($0) }
            }
            guard (200..<300).contains(answer.status) else {
                return answer.status >= 500 || answer.status == 429
                    ? .retry(.unavailable("HTTP \(answer.status)")) : .stop(.refused(status: answer.status))
            }
            let response: VerifyReceiptResponse
            do throws(VerifyReceiptError) {
                response = try VerifyReceiptResponse(body: answer.body)
            } catch {
                return .failure(error, retryable: error.isRetryable)
            }
            let status = VerifyReceiptStatus(response.status)
            guard response.status != 0, status.isRetryable || response.isRetryable, !status.isPermanent else {
                return .success(response)
            }
            return .retry(.status(status))
        }
    }
}
