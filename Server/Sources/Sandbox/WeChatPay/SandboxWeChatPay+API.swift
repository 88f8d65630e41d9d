import ChannelSupport
import Foundation
import OrderSafeModel
import WeChatPay
import _CryptoExtras

/// The API: each request's `Authorization` verified, then pay (prepay), query, close, refund and
/// `/v3/certificates` answered, signed; faults injected first.
extension SandboxWeChatPay {
    /// Answers one API request. `pathAndQuery` is exactly what the client signed (it may carry a prefix before
    /// `/v3/`, as the built-in sandbox's does).
    public func handle(method: String, pathAndQuery: String, headers: [String: String], body: [UInt8]) async
        -> ProviderHTTPResponse
    {
        if !apiFaults.isEmpty {
            switch apiFaults.removeFirst() {
            case .serverError: return signed(500, Self.error("SYSTEM_ERROR", "系统错误"))
            case .frequencyLimited: return signed(429, Self.error("FREQUENCY_LIMITED", "频率超限"))
            case .timeout(let delay):
                try? await Task.sleep(for: delay)
                return ProviderHTTPResponse(status: 504, headers: [:], body: Array("Gateway Timeout".utf8))
            case .badSignature:
                var response = answer(method: method, pathAndQuery: pathAndQuery, headers: headers, body: body)
                response.body += Array(" ".utf8)
                return response
            }
        }
        return answer(method: method, pathAndQuery: pathAndQuery, headers: headers, body: body)
    }

    func answer(method: String, pathAndQuery: String, headers: [String: String], body: [UInt8])
        -> ProviderHTTPResponse
    {
        guard let v3 = pathAndQuery.range(of: "/v3/") else {
            return signed(404, Self.error("NOT_FOUND", "no such API"))
        }
        let route = String(pathAndQuery[v3.lowerBound...])
        let (path, parameters) = PathAndQuery.split(route)
        do {
            try verifyAuthorization(method: method, pathAndQuery: pathAndQuery, headers: headers, body: body)
        } catch let error as SandboxWeChatPayError {
            return signed(error.status, Self.error(error.code, error.description))
        } catch {
            return signed(500, Self.error("SYSTEM_ERROR", "\(error)"))
        }
        if path == "/v3/billdownload/file" {
            // The download is an API call like any other, its `Authorization` checked, but its answer is not
            // signed: the merchant checks the file against hash_value
            // (https://pay.weixin.qq.com/wiki/doc/apiv3/apis/chapter4_5_8.shtml: "使用微信支付API v3标准对download_url进行签名",
            // and the answer "不包含微信接口响应的签名值").
            var token = Substring(parameters["token"] ?? "")
            let gzip = token.hasPrefix(Self.gzipToken)
            if gzip { token = token.dropFirst(Self.gzipToken.count) }
            let file =
                token.hasPrefix(Self.fundFlowToken)
                ? fundFlowBill(date: String(token.dropFirst(Self.fundFlowToken.count))) : bill(date: String(token))
            guard let file else {
                return signed(400, Self.error("NO_STATEMENT_EXIST", "账单文件不存在"))
            }
            guard gzip else {
                return ProviderHTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: file)
            }
            return ProviderHTTPResponse(
                status: 200, headers: ["Content-Type": "application/x-gzip"], body: Zlib.deflate(file, wrapping: .gzip))
        }
        do {
            switch (method, path) {
            case ("POST", "/v3/pay/transactions/app"):
                return try prepay(body)
            case ("GET", _) where path.hasPrefix("/v3/pay/transactions/out-trade-no/"):
                return query(trades[String(path.dropFirst("/v3/pay/transactions/out-trade-no/".count))])
            case ("GET", _) where path.hasPrefix("/v3/pay/transactions/id/"):
                let id = String(path.dropFirst("/v3/pay/transactions/id/".count))
                return query(trades.values.first { $0.transactionID == id })
            case ("POST", _) where path.hasPrefix("/v3/pay/transactions/out-trade-no/") && path.hasSuffix("/close"):
                return try close(
                    String(path.dropFirst("/v3/pay/transactions/out-trade-no/".count).dropLast("/close".count)))
            case ("POST", "/v3/refund/domestic/refunds"):
                return try refund(body)
            case ("GET", _) where path.hasPrefix("/v3/refund/domestic/refunds/"):
                let outRefundNo = String(path.dropFirst("/v3/refund/domestic/refunds/".count))
                guard let trade = trades.values.first(where: { $0.refunds[outRefundNo] != nil }) else {
                    return signed(404, Self.error("RESOURCE_NOT_EXISTS", "退款单不存在"))
                }
                return signed(200, Self.refundJSON(trade, outRefundNo: outRefundNo, statusKey: "status"))
            case ("GET", "/v3/bill/tradebill"), ("GET", "/v3/bill/fundflowbill"):
                let date = parameters["bill_date"] ?? ""
                let fundFlow = path == "/v3/bill/fundflowbill"
                // WeChat Pay writes a day's bill the next morning and answers STATEMENT_CREATING until then (from
                // 10:00 it is there), NO_STATEMENT_EXIST for a day without a payment or refund
                // (https://pay.weixin.qq.com/docs/merchant/apis/jsapi-payment/get-trade-bill.html).
                guard date.utf8.count == 10, date.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (48...57).contains($0) })
                else { return signed(400, Self.error("INVALID_REQUEST", "bill_date 格式错误")) }
                let published = RFC3339Beijing.string(clock.now().addingTimeInterval(billsAtOnce ? 0 : -34 * 3600))
                    .prefix(10)
                guard date <= published else { return signed(400, Self.error("STATEMENT_CREATING", "账单生成中")) }
                guard let file = fundFlow ? fundFlowBill(date: date) : bill(date: date) else {
                    return signed(400, Self.error("NO_STATEMENT_EXIST", "账单文件不存在"))
                }
                let digest = Insecure.SHA1.hash(data: file).map { String(format: "%02x", $0) }.joined()
                let base = String(pathAndQuery[..<v3.lowerBound])
                return signed(
                    200,
                    #"{"hash_type":"SHA1","hash_value":"\#(digest)","download_url":"\#(downloadBase)\#(base)/v3/billdownload/file?token=\#(parameters["tar_type"] == "GZIP" ? Self.gzipToken : "")\#(fundFlow ? Self.fundFlowToken : "")\#(date)"}"#
                )
            case ("GET", "/v3/certificates"):
                return try certificates()
            default:
                return signed(404, Self.error("NOT_FOUND", "no such API: \(method) \(path)"))
            }
        } catch let error as SandboxWeChatPayError {
            return signed(error.status, Self.error(error.code, error.description))
        } catch {
            return signed(500, Self.error("SYSTEM_ERROR", "\(error)"))
        }
    }

    public func setDownloadBase(_ base: String) {
        downloadBase = base
    }

    func prepay(_ body: [UInt8]) throws -> ProviderHTTPResponse {
        let object = try Self.object(body)
        let amount = try Self.read { try object.object("amount") }
        let total = try Self.read { try amount.int("total") }
        let currency = try Self.read { try amount.optionalString("currency") } ?? "CNY"
        guard try Self.read({ try object.string("appid") }) == appID else {
            throw SandboxWeChatPayError.invalidRequest("appid is not ours")
        }
        guard try Self.read({ try object.string("mchid") }) == merchantID else {
            throw SandboxWeChatPayError.invalidRequest("mchid mismatch")
        }
        guard total > 0, let code = CurrencyCode(currency) else {
            throw SandboxWeChatPayError.invalidRequest("amount.total must be positive")
        }
        let outTradeNo = try Self.read { try object.string("out_trade_no") }
        guard (6...32).contains(outTradeNo.utf8.count) else {
            throw SandboxWeChatPayError.invalidRequest("out_trade_no must be 6 to 32 characters")
        }
        let money = Money(amountMinor: total, currency: code)
        if let existing = trades[outTradeNo] {
            guard existing.amount == money else { throw SandboxWeChatPayError.outTradeNoUsed }
            return signed(200, #"{"prepay_id":"\#(existing.prepayID)"}"#)
        }
        // WeChat Pay's transaction_id is 28 digits (`4200000985` `20210303` `1441826014`): a prefix, the day, a number.
        let number = String(format: "%010lld", try serial.take())
        try keep(
            SandboxWeChatPayTrade(
                outTradeNo: outTradeNo, transactionID: "4200000000" + Self.day(clock.now()) + number,
                prepayID: "wx" + Self.day(clock.now()) + number,
                appID: appID, description: try Self.read { try object.string("description") }, amount: money,
                notifyURL: try Self.read { try object.string("notify_url") },
                attach: try Self.read { try object.optionalString("attach") },
                state: .notPay))
        return signed(200, #"{"prepay_id":"\#(trades[outTradeNo]!.prepayID)"}"#)
    }

    func query(_ trade: SandboxWeChatPayTrade?) -> ProviderHTTPResponse {
        guard var trade else { return signed(404, Self.error("ORDER_NOT_EXIST", "订单不存在")) }
        if queryLag > 0, trade.state.isPaid, let time = trade.successTime,
            let paid = ISO8601DateFormatter().date(from: time), clock.now().timeIntervalSince(paid) < queryLag
        {
            trade.state = .userPaying
        }
        return signed(200, Self.transactionJSON(trade, merchantID: merchantID))
    }

    /// Publishes each day's bills at once, today's so far included (for a run on real time that ends by checking its
    /// statements), or as WeChat Pay does again.
    public func publishBillsAtOnce(_ atOnce: Bool) {
        billsAtOnce = atOnce
    }

    /// From now on, queries answer a payment younger than `seconds` as `USERPAYING` (the buyer still paying), so that
    /// only its notification, or the day's bill, shows it was paid (0 ends the lag). The bill and refunds are not
    /// affected.
    public func setQueryLag(_ seconds: TimeInterval) {
        queryLag = seconds
    }

    func close(_ outTradeNo: String) throws -> ProviderHTTPResponse {
        guard var trade = trades[outTradeNo] else { return signed(204, "") }
        guard !trade.state.isPaid else { return signed(400, Self.error("ORDER_PAID", "订单已支付")) }
        trade.state = .closed
        try keep(trade)
        return signed(204, "")
    }

    func refund(_ body: [UInt8]) throws -> ProviderHTTPResponse {
        let object = try Self.object(body)
        let outTradeNo = try Self.read { try object.string("out_trade_no") }
        let outRefundNo = try Self.read { try object.string("out_refund_no") }
        let amount = try Self.read { try object.object("amount") }
        let fen = try Self.read { try amount.int("refund") }
        guard var trade = trades[outTradeNo] else { return signed(404, Self.error("RESOURCE_NOT_EXISTS", "订单不存在")) }
        if trade.refunds[outRefundNo] == nil {
            guard trade.state.isPaid else { return signed(403, Self.error("TRADE_ERROR", "订单未支付")) }
            guard fen > 0, trade.refundedFen + fen <= trade.amount.amountMinor,
                try Self.read({ try amount.int("total") }) == trade.amount.amountMinor
            else { return signed(400, Self.error("PARAM_ERROR", "退款金额不合法")) }
            let notifyURL = try Self.read { try object.optionalString("notify_url") }
            trade.refunds[outRefundNo] = SandboxWeChatPayRefund(
                refundID: "50300" + String(format: "%015lld", try serial.take()), fen: fen, notifyURL: notifyURL,
                time: RFC3339Beijing.string(clock.now()))
            trade.state = WeChatPayTradeState.refund
            try keep(
                trade,
                notifying: notifyURL.flatMap { url in
                    notification(
                        url: url, eventType: "REFUND.SUCCESS", summary: "退款成功", originalType: "refund",
                        resource: Self.refundJSON(
                            trade, outRefundNo: outRefundNo, statusKey: "refund_status", merchantID: merchantID))
                })
        }
        return signed(200, Self.refundJSON(trade, outRefundNo: outRefundNo, statusKey: "status"))
    }

    func certificates() throws -> ProviderHTTPResponse {
        let items = try platforms.map { platform in
            let nonce = Self.nonce()
            let ciphertext = try cipher.encrypt(
                Array(platform.certificatePEM.utf8), nonce: nonce, associatedData: "certificate")
            return
                #"{"serial_no":"\#(platform.serial)","effective_time":"\#(RFC3339Beijing.string(platform.notBefore))","expire_time":"\#(RFC3339Beijing.string(platform.notAfter))","encrypt_certificate":{"algorithm":"AEAD_AES_256_GCM","nonce":"\#(nonce)","associated_data":"certificate","ciphertext":"\#(ciphertext)"}}"#
        }
        // /v3/certificates is always signed with a platform certificate, whatever the merchant's mode.
        return signed(200, #"{"data":[\#(items.joined(separator: ","))]}"#, platform: platforms.last!)
    }

    func verifyAuthorization(method: String, pathAndQuery: String, headers: [String: String], body: [UInt8])
        throws
    {
        guard let header = headers.first(where: { $0.key.lowercased() == "authorization" })?.value,
            header.hasPrefix("WECHATPAY2-SHA256-RSA2048 ")
        else { throw SandboxWeChatPayError.unauthorized("missing or unsupported Authorization") }
        var fields: [String: String] = [:]
        for part in header.dropFirst("WECHATPAY2-SHA256-RSA2048 ".count).split(separator: ",") {
            guard let equals = part.firstIndex(of: "=") else { continue }
            fields[String(part[..<equals]).trimmingCharacters(in: .whitespaces)] = String(
                part[part.index(after: equals)...]
            )
            .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        guard fields["mchid"] == merchantID else { throw SandboxWeChatPayError.unauthorized("mchid does not match") }
        guard fields["serial_no"]?.uppercased() == merchantSerial.uppercased() else {
            throw SandboxWeChatPayError.unauthorized("serial_no is not the merchant certificate's")
        }
        guard let timestamp = fields["timestamp"].flatMap({ Int64($0) }), let nonce = fields["nonce_str"],
            let signature = fields["signature"],
            TimestampWindow.contains(timestamp, now: Int64(clock.now().timeIntervalSince1970), seconds: 300)
        else { throw SandboxWeChatPayError.unauthorized("timestamp, nonce_str or signature missing or expired") }
        // WeChat Pay serves API v3 at its host's root and checks the signature over the path it was sent. This
        // sandbox is mounted below a base path (`/sandbox/wechatpay`), which is its host's root: an SDK that signs the
        // path below its gateway (wechatpayv3: `build_authorization(path, …)` with `gate_way + path` sent) and one
        // that signs the URL's whole path (wechatpay-go: `request.URL.RequestURI()`) both call it right.
        let below = pathAndQuery.range(of: "/v3/").map { String(pathAndQuery[$0.lowerBound...]) }
        let signedOver = Set([pathAndQuery, below ?? pathAndQuery])
        let verified = signedOver.contains { path in
            var message = Array("\(method)\n\(path)\n\(timestamp)\n\(nonce)\n".utf8)
            message += body
            message.append(UInt8(ascii: "\n"))
            return SHA256WithRSA.verify(signature, over: message, with: merchantPublicKey)
        }
        guard verified else {
            throw SandboxWeChatPayError.unauthorized("the Authorization signature does not verify")
        }
    }
}
