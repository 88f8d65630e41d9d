import ChannelSupport
import Crypto
import Foundation
import Logging
import OrderSafeModel

/// WeChat Pay API v3 for a merchant's app payments: prepay, app invoke parameters, transaction queries, close,
/// refunds, refund queries and trade bills. Every request carries the merchant's `Authorization` signature; every
/// 2xx answer is verified on its raw bytes with WeChat Pay's keys before it is read. Network failures, 5xx,
/// `SYSTEM_ERROR` and `FREQUENCY_LIMITED` are retried with backoff; business errors never are.
public struct WeChatPayClient: Sendable {
    public static let productionBaseURL = "https://api.mch.weixin.qq.com"

    public let appID: String
    let requester: WeChatPayRequester
    let verifier: SignedMessageVerifier

    /// - Parameters:
    ///   - keys: WeChat Pay's keys: a fixed ``WeChatPayVerificationKeys`` (public-key mode) or a
    ///     ``PlatformCertificateStore``.
    ///   - nonce: the `nonce_str` of each request (injected so tests are deterministic).
    public init(
        merchant: MerchantSigner, appID: String, keys: any WeChatPayKeyProvider, baseURL: String = productionBaseURL,
        transport: any ProviderTransport = HTTPClientProviderTransport(), retry: RetryPolicy = RetryPolicy(),
        clock: any WallClock = SystemClock(), nonce: @escaping @Sendable () -> String = WeChatPayNonce.random,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = Logger(label: "ordersafe.wechatpay")
    ) {
        self.appID = appID
        requester = WeChatPayRequester(
            merchant: merchant, baseURL: baseURL, transport: transport, retry: retry, clock: clock, nonce: nonce,
            sleep: sleep,
            logger: logger)
        verifier = SignedMessageVerifier(keys: keys, clock: clock)
    }

    public var merchantID: String { requester.merchant.merchantID }

    /// `POST /v3/pay/transactions/app`: the `prepay_id` (valid for two hours) for an app payment.
    public func prepayApp(_ order: WeChatPayAppOrder) async throws(WeChatPayAPIError) -> String {
        let object = try await call(
            "POST", "/v3/pay/transactions/app", body: order.json(appID: appID, merchantID: merchantID))
        guard let prepayID = try? object.string("prepay_id"), !prepayID.isEmpty else {
            throw .malformedResponse("no prepay_id")
        }
        return prepayID
    }

    /// The signed parameters the app hands to the WeChat SDK for `prepayID`.
    public func appInvocation(prepayID: String) throws -> WeChatPayInvocation {
        WeChatPayInvocation(
            try requester.merchant.appInvocation(
                appID: appID, prepayID: prepayID, timestamp: Int64(requester.clock.now().timeIntervalSince1970),
                nonce: requester.nonce()))
    }

    /// `GET /v3/pay/transactions/out-trade-no/{out_trade_no}`.
    public func queryTransaction(outTradeNo: String) async throws(WeChatPayAPIError) -> WeChatPayQueryResult {
        try await query(
            "/v3/pay/transactions/out-trade-no/\(Self.segment(outTradeNo))?mchid=\(Self.segment(merchantID))")
    }

    /// `GET /v3/pay/transactions/id/{transaction_id}`.
    public func queryTransaction(transactionID: String) async throws(WeChatPayAPIError) -> WeChatPayQueryResult {
        try await query("/v3/pay/transactions/id/\(Self.segment(transactionID))?mchid=\(Self.segment(merchantID))")
    }

    /// `POST /v3/pay/transactions/out-trade-no/{out_trade_no}/close` (answered 204). Closing an order WeChat Pay
    /// never saw succeeds too.
    public func closeTransaction(outTradeNo: String) async throws(WeChatPayAPIError) {
        _ = try await verified(
            try await requester.send(
                "POST", "/v3/pay/transactions/out-trade-no/\(Self.segment(outTradeNo))/close",
                body: "{\"mchid\":\(JSONString.encode(merchantID))}"))
    }

    /// `POST /v3/refund/domestic/refunds`.
    public func refund(_ request: WeChatPayRefundRequest) async throws(WeChatPayAPIError) -> WeChatPayRefund {
        let response = try await verified(
            try await requester.send("POST", "/v3/refund/domestic/refunds", body: request.json()))
        return try Self.refund(response.body)
    }

    /// `GET /v3/refund/domestic/refunds/{out_refund_no}`.
    public func queryRefund(outRefundNo: String) async throws(WeChatPayAPIError) -> WeChatPayRefundQueryResult {
        do {
            let response = try await verified(
                try await requester.send("GET", "/v3/refund/domestic/refunds/\(Self.segment(outRefundNo))"))
            return .refund(try Self.refund(response.body))
        } catch {
            if case .business(404, _, _) = error { return .notFound }
            throw error
        }
    }

    /// `GET /v3/bill/tradebill?bill_date=yyyy-MM-dd&bill_type=ALL|SUCCESS|REFUND`.
    public func tradeBill(date: String, type: String = "ALL", gzip: Bool = false) async throws(WeChatPayAPIError)
        -> WeChatPayBill
    {
        try await bill(
            "/v3/bill/tradebill?bill_date=\(Self.segment(date))&bill_type=\(Self.segment(type))", gzip: gzip)
    }

    /// A bill's digest and download address; with `gzip`, `tar_type=GZIP` asks for the download gzipped (about a
    /// tenth of the bytes over the network).
    private func bill(_ pathAndQuery: String, gzip: Bool) async throws(WeChatPayAPIError) -> WeChatPayBill {
        let object = try await call("GET", pathAndQuery + (gzip ? "&tar_type=GZIP" : ""))
        guard let hashType = try? object.string("hash_type"), let hashValue = try? object.string("hash_value"),
            let url = try? object.string("download_url")
        else { throw .malformedResponse("a bill needs hash_type, hash_value and download_url") }
        return WeChatPayBill(hashType: hashType, digest: hashValue, downloadURL: url, gzip: gzip)
    }

    /// `GET /v3/bill/fundflowbill?bill_date=yyyy-MM-dd&account_type=BASIC|OPERATION|FEES`: the account's movements.
    public func fundFlowBill(date: String, accountType: String = "BASIC", gzip: Bool = false)
        async throws(WeChatPayAPIError) -> WeChatPayBill
    {
        try await bill(
            "/v3/bill/fundflowbill?bill_date=\(Self.segment(date))&account_type=\(Self.segment(accountType))",
            gzip: gzip)
    }

    /// Downloads a bill (the download is signed by us but not by WeChat Pay) and checks it against its SHA-1 digest,
    /// which WeChat Pay computes over the bill itself (hash_value: "原始账单（gzip需要解压缩）的摘要值",
    /// https://pay.weixin.qq.com/doc/v3/merchant/4012556654): a gzipped download is inflated a piece at a time into
    /// the digest (at most `maxBytes`) and kept as it came.
    ///
    /// The download is signed with the merchant's key (`Authorization`), so it goes to the configured API host alone
    /// (scheme, host and port): WeChat Pay's `download_url` is on it (`https://api.mch.weixin.qq.com/v3/billdownload/
    /// file?token=…` in its documentation); any other address is not fetched.
    public func downloadFile(_ bill: WeChatPayBill, maxBytes: Int = 1 << 30) async throws(WeChatPayAPIError)
        -> WeChatPayBillFile
    {
        guard let api = DownloadOrigins.Origin(url: requester.baseURL),
            DownloadOrigins(origins: [api]).permit(bill.downloadURL)
        else { throw .malformedResponse("download_url is not on the configured API host; not fetched") }
        let response = try await requester.send("GET", "", url: bill.downloadURL)
        guard bill.hashType == "SHA1" else { throw .malformedResponse("unsupported hash_type \(bill.hashType)") }
        let file = WeChatPayBillFile(bytes: response.body, gzip: bill.gzip, maxBytes: maxBytes)
        var hasher = Insecure.SHA1()
        do {
            let pieces = try file.pieces()
            while let piece = try pieces() { hasher.update(data: piece) }
        } catch {
            throw .malformedResponse("the gzipped bill: \(error)")
        }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        guard digest == bill.digest.lowercased() else { throw .billHashMismatch }
        return file
    }

    /// ``downloadFile(_:maxBytes:)``, the whole bill.
    public func download(_ bill: WeChatPayBill, maxBytes: Int = 1 << 30) async throws(WeChatPayAPIError) -> [UInt8] {
        let file = try await downloadFile(bill, maxBytes: maxBytes)
        do {
            return try file.whole()
        } catch {
            throw .malformedResponse("the gzipped bill: \(error)")
        }
    }

    // MARK: Helpers

    private func query(_ path: String) async throws(WeChatPayAPIError) -> WeChatPayQueryResult {
        let object: JSONObject
        do {
            object = try await call("GET", path)
        } catch {
            if case .business(404, _, _) = error { return .notFound }
            throw error
        }
        do {
            return .transaction(try WeChatPayTransaction(object))
        } catch {
            throw .malformedResponse("transaction: \(error)")
        }
    }

    private func call(_ method: String, _ path: String, body: String = "") async throws(WeChatPayAPIError) -> JSONObject
    {
        let response = try await verified(try await requester.send(method, path, body: body))
        do {
            return try JSONObject(response.body)
        } catch {
            throw .malformedResponse("\(error)")
        }
    }

    private func verified(_ response: ProviderHTTPResponse) async throws(WeChatPayAPIError) -> ProviderHTTPResponse {
        do {
            try await verifier.verify(headers: response.headers, body: response.body)
        } catch {
            throw .verification(error)
        }
        return response
    }

    private static func refund(_ body: [UInt8]) throws(WeChatPayAPIError) -> WeChatPayRefund {
        do {
            return try WeChatPayRefund(resource: body)
        } catch {
            throw .malformedResponse("\(error)")
        }
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")

    /// A path segment or query value, percent-encoded (order numbers are alphanumeric, but nothing is assumed).
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}

/// Random `nonce_str` values: 32 characters of uppercase letters and digits.
public enum WeChatPayNonce {
    public static let random: @Sendable () -> String = {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<32).map { _ in alphabet.randomElement()! })
    }
}
