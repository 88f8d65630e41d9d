import ChannelSupport
import Foundation
import Logging
import OrderSafeModel

/// Signs and sends API v3 requests with retries; shared by ``WeChatPayClient`` and ``PlatformCertificateStore``.
/// Returns 2xx answers unverified (the caller verifies them with the keys it trusts); maps the rest to typed errors.
struct WeChatPayRequester: Sendable {
    let merchant: MerchantSigner
    let baseURL: String
    /// The path part of `baseURL` (empty for WeChat Pay itself, `/sandbox/wechatpay` for the built-in sandbox):
    /// the `Authorization` signature covers the path as sent.
    let basePath: String
    let transport: any ProviderTransport
    let retry: RetryPolicy
    let clock: any WallClock
    let nonce: @Sendable () -> String
    let sleep: @Sendable (Duration) async throws -> Void
    let logger: Logger

    init(
        merchant: MerchantSigner, baseURL: String, transport: any ProviderTransport, retry: RetryPolicy,
        clock: any WallClock,
        nonce: @escaping @Sendable () -> String, sleep: @escaping @Sendable (Duration) async throws -> Void,
        logger: Logger
    ) {
        self.merchant = merchant
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        basePath = URLComponents(string: self.baseURL)?.path ?? ""
        self.transport = transport
        self.retry = retry
        self.clock = clock
        self.nonce = nonce
        self.sleep = sleep
        self.logger = logger
    }

    /// `pathAndQuery` starts with `/v3/`; `url` overrides it with an absolute URL (bill downloads).
    func send(_ method: String, _ pathAndQuery: String, body: String = "", url: String? = nil)
        async throws(WeChatPayAPIError)
        -> ProviderHTTPResponse
    {
        let target = url ?? baseURL + pathAndQuery
        let signedPath =
            url.flatMap { URLComponents(string: $0) }.map {
                $0.percentEncodedPath + ($0.percentEncodedQuery.map { "?" + $0 } ?? "")
            }
            ?? basePath + pathAndQuery
        return try await retry.run(
            sleep: sleep,
            onRetry: { attempt, error in
                logger.warning(
                    "wechatpay call failed",
                    metadata: ["path": "\(pathAndQuery)", "attempt": "\(attempt)", "error": "\(error)"])
            }
        ) { () async -> Attempt<ProviderHTTPResponse, WeChatPayAPIError> in
            let authorization: String
            do {
                authorization = try merchant.authorization(
                    method: method, pathAndQuery: signedPath, timestamp: Int64(clock.now().timeIntervalSince1970),
                    nonce: nonce(),
                    body: body)
            } catch {
                return .stop(.malformedResponse("the request could not be signed: \(error)"))
            }
            var headers = ["Authorization": authorization, "Accept": "application/json", "User-Agent": "OrderSafe"]
            if !body.isEmpty { headers["Content-Type"] = "application/json" }
            let response: ProviderHTTPResponse
            do {
                response = try await transport.send(
                    method: method, url: target, headers: headers, body: Array(body.utf8), timeout: retry.timeout)
            } catch {
                return .transportFailure(error) { .unavailable($0) }
            }
            if (200..<300).contains(response.status) { return .success(response) }
            let error = Self.error(for: response)
            return .failure(error, retryable: error.isRetryable)
        }
    }

    /// `{"code": …, "message": …}` of a non-2xx answer, typed.
    static func error(for response: ProviderHTTPResponse) -> WeChatPayAPIError {
        let object = try? JSONObject(response.body)
        let code = (try? object?.optionalString("code")) ?? nil
        let message = ((try? object?.optionalString("message")) ?? nil) ?? "HTTP \(response.status)"
        guard let code else {
            return response.status >= 500
                ? .unavailable("HTTP \(response.status)")
                : .business(
                    status: response.status, code: "HTTP_\(response.status)", message: message)
        }
        if response.status >= 500 || response.status == 429 || WeChatPayAPIError.retryableCodes.contains(code) {
            return .systemError(status: response.status, code: code, message: message)
        }
        return .business(status: response.status, code: code, message: message)
    }
}
