import ChannelSupport
import Foundation
import Logging
import OrderSafeModel

/// Calls Alipay's open-platform gateway: query, close, refund, refund query and bill download URL.
/// Retries network failures, 5xx and system errors with exponential backoff; never retries business errors.
public struct AlipayGatewayClient: Sendable {
    public static let productionGateway = "https://openapi.alipay.com/gateway.do"
    public static let sandboxGateway = "https://openapi-sandbox.dl.alipaydev.com/gateway.do"

    /// How often and how patiently to retry.
    public typealias RetryPolicy = ChannelSupport.RetryPolicy

    /// The largest gateway answer read.
    static let maxAnswerBytes = 1 << 20

    let credentials: AlipayCredentials
    let gatewayURL: String
    let transport: any AlipayTransport
    let retry: RetryPolicy
    let clock: any WallClock
    let sleep: @Sendable (Duration) async throws -> Void
    let logger: Logger

    public init(
        credentials: AlipayCredentials, gatewayURL: String = productionGateway,
        transport: any AlipayTransport = HTTPClientAlipayTransport(), retry: RetryPolicy = RetryPolicy(),
        clock: any WallClock = SystemClock(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = Logger(label: "ordersafe.alipay")
    ) {
        self.credentials = credentials
        self.gatewayURL = gatewayURL
        self.transport = transport
        self.retry = retry
        self.clock = clock
        self.sleep = sleep
        self.logger = logger
    }

    public func queryTrade(outTradeNo: String) async throws(AlipayGatewayError) -> AlipayTradeQueryResult {
        let response = try await call(
            "alipay.trade.query", ["out_trade_no": outTradeNo], notFound: "ACQ.TRADE_NOT_EXIST")
        guard let response else { return .notFound }
        return .trade(try trade(from: response))
    }

    public func closeTrade(outTradeNo: String) async throws(AlipayGatewayError) -> AlipayCloseResult {
        let response = try await call(
            "alipay.trade.close", ["out_trade_no": outTradeNo], notFound: "ACQ.TRADE_NOT_EXIST")
        return response == nil ? .notFound : .closed
    }

    /// Refunds `amount` of a trade; `outRequestNo` makes the call idempotent (a repeat refunds nothing more).
    public func refund(outTradeNo: String, amount: Money, outRequestNo: String, reason: String? = nil)
        async throws(AlipayGatewayError) -> AlipayRefundResult
    {
        let refundAmount: String
        do {
            refundAmount = try AlipayAmount.string(amount)
        } catch {
            throw .business(code: "40002", subCode: "local.INVALID_AMOUNT", message: error.description)
        }
        var biz = ["out_trade_no": outTradeNo, "refund_amount": refundAmount, "out_request_no": outRequestNo]
        biz["refund_reason"] = reason
        guard let response = try await call("alipay.trade.refund", biz, notFound: nil) else {
            throw .malformedResponse("refund without a response")
        }
        guard let tradeNo = response.string("trade_no"),
            let fee = response.string("refund_fee").flatMap(AlipayAmount.fen)
        else {
            throw .malformedResponse("refund response lacks trade_no or refund_fee")
        }
        return AlipayRefundResult(
            tradeNo: tradeNo, outTradeNo: response.string("out_trade_no") ?? outTradeNo,
            refundFee: Money(amountMinor: fee, currency: .cny), fundChange: response.string("fund_change") == "Y")
    }

    public func queryRefund(outTradeNo: String, outRequestNo: String) async throws(AlipayGatewayError)
        -> AlipayRefundQueryResult
    {
        let response = try await call(
            "alipay.trade.fastpay.refund.query", ["out_trade_no": outTradeNo, "out_request_no": outRequestNo],
            notFound: "ACQ.TRADE_NOT_EXIST")
        // Alipay answers 10000 without refund_amount when no such refund exists.
        guard let response, let amount = response.string("refund_amount").flatMap(AlipayAmount.fen) else {
            return .notFound
        }
        return .refund(
            outRequestNo: response.string("out_request_no") ?? outRequestNo,
            amount: Money(amountMinor: amount, currency: .cny),
            status: response.string("refund_status"))
    }

    /// The short-lived URL of a day's (`yyyy-MM-dd`) or month's (`yyyy-MM`) bill; nil when Alipay answers
    /// `isp.bill_not_exist` (not written yet — a day's bill is there by 09:00 the next day — or a day without business).
    public func billDownloadURL(billType: String = "trade", billDate: String) async throws(AlipayGatewayError)
        -> String?
    {
        guard
            let response = try await call(
                "alipay.data.dataservice.bill.downloadurl.query", ["bill_type": billType, "bill_date": billDate],
                notFound: "isp.bill_not_exist")
        else { return nil }
        guard let url = response.string("bill_download_url") else { throw .malformedResponse("no bill_download_url") }
        return url
    }

    /// Where Alipay's bills may be downloaded from: the gateway's own origin (the built-in sandbox serves both), and,
    /// behind Alipay's own gateways, its bill host over plain HTTP as Alipay answers it
    /// (`http://dwbillcenter.alipay.com/downloadBillFile.resource?…` in Alipay's documentation of
    /// `alipay.data.dataservice.bill.downloadurl.query` and in every published sample of the answer) or any host of
    /// the gateway's domain over HTTPS. Nowhere else: not loopback, not another host's port, not a Unix socket.
    static func billOrigins(gatewayURL: String) -> DownloadOrigins {
        guard let gateway = DownloadOrigins.Origin(url: gatewayURL) else { return DownloadOrigins(origins: []) }
        for domain in ["alipay.com", "alipaydev.com"] where gateway.host.hasSuffix("." + domain) {
            return DownloadOrigins(
                origins: [gateway, .init(scheme: "http", host: "dwbillcenter." + domain)], httpsDomains: [domain])
        }
        return DownloadOrigins(origins: [gateway])
    }

    /// Downloads a bill from the URL ``billDownloadURL(billType:billDate:)`` gave, retried as gateway calls are. The
    /// file is not signed: the zip's CRC-32s and the bill's own totals are its checks. The URL carries a token and is
    /// never logged; one outside ``billOrigins(gatewayURL:)`` is not fetched.
    public func downloadBill(url: String) async throws(AlipayGatewayError) -> [UInt8] {
        guard Self.billOrigins(gatewayURL: gatewayURL).permit(url) else {
            throw .malformedResponse("bill_download_url is not on Alipay's bill hosts; not fetched")
        }
        return try await retry.run(
            sleep: sleep,
            onRetry: { attempt, error in
                logger.warning("alipay bill download failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
            }
        ) { () async -> Attempt<[UInt8], AlipayGatewayError> in
            let status: Int
            let body: [UInt8]
            do {
                (status, body) = try await transport.get(url: url, timeout: retry.timeout)
            } catch {
                return .transportFailure(error) { .unavailable($0) }
            }
            if let refusal: Attempt<[UInt8], AlipayGatewayError> = Self.refusal(status: status) { return refusal }
            return .success(body)
        }
    }

    private func trade(from response: AlipayGatewayResponse) throws(AlipayGatewayError) -> AlipayTrade {
        guard let tradeNo = response.string("trade_no"), let outTradeNo = response.string("out_trade_no"),
            let status = response.string("trade_status").flatMap(AlipayTradeStatus.init(rawValue:)),
            let amount = response.string("total_amount").flatMap(AlipayAmount.fen)
        else { throw .malformedResponse("trade query lacks trade_no, out_trade_no, trade_status or total_amount") }
        return AlipayTrade(
            tradeNo: tradeNo, outTradeNo: outTradeNo, status: status,
            totalAmount: Money(amountMinor: amount, currency: .cny),
            buyerID: response.string("buyer_user_id"),
            paidAt: response.string("send_pay_date").flatMap(BeijingTime.date),
            passbackParams: response.string("passback_params"))
    }

    /// One method call with retries. Returns nil when the answer is the `notFound` sub-code.
    private func call(_ method: String, _ biz: [String: String], notFound: String?) async throws(AlipayGatewayError)
        -> AlipayGatewayResponse?
    {
        try await retry.run(
            sleep: sleep,
            onRetry: { attempt, error in
                logger.warning(
                    "alipay call failed",
                    metadata: ["method": "\(method)", "attempt": "\(attempt)", "error": "\(error)"])
            }
        ) { () async -> Attempt<AlipayGatewayResponse?, AlipayGatewayError> in
            let form: String
            do {
                form = FormEncoding.encode(
                    try AlipayRequestSigner(credentials: credentials).signedParameters(
                        method: method, bizContent: biz, at: clock.now()))
            } catch {
                return .stop(.malformedResponse("the request could not be signed: \(error)"))
            }
            let status: Int
            let body: [UInt8]
            do {
                (status, body) = try await transport.post(url: gatewayURL, form: form, timeout: retry.timeout)
            } catch {
                return .transportFailure(error) { .unavailable($0) }
            }
            if let refusal: Attempt<AlipayGatewayResponse?, AlipayGatewayError> = Self.refusal(status: status) {
                return refusal
            }
            // The transport takes bills too; a gateway answer is small.
            guard body.count <= Self.maxAnswerBytes else {
                return .stop(.malformedResponse("\(body.count) bytes: a gateway answer is at most 1 MiB"))
            }
            let response: AlipayGatewayResponse
            do throws(AlipayGatewayError) {
                response = try AlipayGatewayResponse.verified(body: body, method: method, credentials: credentials)
            } catch {
                return .failure(error, retryable: error.isRetryable)
            }
            if response.isSuccess { return .success(response) }
            if let notFound, response.subCode == notFound { return .success(nil) }
            return .failure(response.error, retryable: response.error.isRetryable)
        }
    }

    /// What an HTTP status other than 2xx means: 5xx and 429 are tried again, any other refusal is final.
    private static func refusal<Value>(status: Int) -> Attempt<Value, AlipayGatewayError>? {
        guard !(200..<300).contains(status) else { return nil }
        return status >= 500 || status == 429
            ? .retry(.unavailable("HTTP \(status)")) : .stop(.refused(status: status))
    }
}
