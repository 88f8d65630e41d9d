import AppStore
import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel

/// The App Store Server API as Apple serves it: the merchant's bearer token checked, rate limits, outages and
/// refusals as configured, `verifyReceipt` and the OCSP responder beside it.
extension SandboxAppStore {
    /// Makes the Server API up, unreachable or slow for every call from now on.
    public func setServerAPI(_ state: ServerAPIState) {
        serverAPIState = state
    }

    /// After `calls` more answered calls of `endpoint` (`history`, `transactions`, …), every call of it is refused
    /// with 401, as when the merchant's key is revoked in App Store Connect midway; nil answers them again.
    public func refuseServerAPI(after calls: Int?, endpoint: String) {
        refusals[endpoint] = calls.map { serverAPICalls[endpoint, default: 0] + $0 }
    }

    /// Limits the Server API to `perSecond` calls a second, or lifts the limit (nil).
    public func setRateLimit(perSecond: Int?) {
        rateLimit = perSecond
        rateWindow = nil
    }

    /// The 429 a call past the rate limit gets; nil when it is within it (and counted).
    private func rateLimited() -> ProviderHTTPResponse? {
        guard let rateLimit else { return nil }
        let now = ContinuousClock.now
        if let window = rateWindow, now - window.start < .seconds(1) {
            guard window.calls < rateLimit else {
                var response = Self.json(429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
                response.headers["Retry-After"] = "1"
                return response
            }
            rateWindow = (window.start, window.calls + 1)
        } else {
            rateWindow = (now, 1)
        }
        return nil
    }

    /// Answers one request (path and query after the base URL).
    public func handle(method: String, pathAndQuery: String, headers: [String: String], body: [UInt8]) async
        -> ProviderHTTPResponse
    {
        if method == "POST", pathAndQuery.hasSuffix("/verifyReceipt") {
            return await verifyReceipt(body: body, atProduction: !pathAndQuery.hasSuffix("/sandbox/verifyReceipt"))
        }
        if method == "POST", pathAndQuery.hasSuffix("/ocsp") {
            return ocsp(body: body)
        }
        if let fault = faults.first, !Self.nonAPIFaults.contains(fault) {
            faults.removeFirst()
            switch fault {
            case .serverError:
                return Self.json(
                    500, #"{"errorCode":5000001,"errorMessage":"An unknown error occurred. Please try again."}"#)
            case .rateLimited(let seconds):
                var response = Self.json(429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
                response.headers["Retry-After"] = String(seconds)
                return response
            case .timeout(let delay):
                try? await Task.sleep(for: delay)
                return ProviderHTTPResponse(status: 504, headers: [:], body: [])
            case .expiredLeaf, .revokedLeaf, .ocspUnavailable, .receiptServerUnavailable: break
            }
        }
        serverAPIAttempts += 1
        switch serverAPIState {
        case .up: break
        case .unreachable:
            // The caller's own timeout ends the wait (a task cancelled); a caller without one waits a minute.
            try? await Task.sleep(for: .seconds(60))
            return ProviderHTTPResponse(status: 504, headers: [:], body: [])
        case .slow(let delay): try? await Task.sleep(for: delay)
        }
        guard authorized(headers) else { return Self.json(401, "") }
        let (path, query) = PathAndQuery.split(pathAndQuery)
        let segments = path.split(separator: "/").map(String.init)
        if let limited = rateLimited() { return limited }
        let api = segments.suffix(from: segments.firstIndex(of: "inApps") ?? segments.count)
        let endpoint = api.dropFirst(2).first ?? path
        if let refusedFrom = refusals[endpoint], serverAPICalls[endpoint, default: 0] >= refusedFrom {
            return Self.json(401, "")
        }
        serverAPICalls[endpoint, default: 0] += 1
        do {
            switch (
                method,
                Array(segments.suffix(from: min(segments.count, segments.firstIndex(of: "inApps") ?? segments.count)))
            ) {
            case ("GET", let s) where s.count == 4 && s[1] == "v1" && s[2] == "transactions":
                guard let signed = try signedTransaction(s[3]) else { return Self.notFound }
                return Self.json(200, try Self.encode(["signedTransactionInfo": signed]))
            case ("GET", let s) where s.count == 4 && s[2] == "history":
                guard
                    let ids = try history(
                        of: s[3], from: query["startDate"].flatMap { Int64($0) },
                        until: query["endDate"].flatMap { Int64($0) })
                else { return Self.notFound }
                guard let start = PathAndQuery.position(query["revision"]) else {
                    return Self.json(400, #"{"errorCode":4000005,"errorMessage":"Invalid revision."}"#)
                }
                let page = Array(ids.dropFirst(start).prefix(2))
                let end = start + page.count
                return Self.json(
                    200,
                    try Self.encode([
                        "signedTransactions": try page.compactMap(signedTransaction), "revision": String(end),
                        "hasMore": end < ids.count,
                        "bundleId": bundleID, "appAppleId": appAppleID, "environment": "Sandbox",
                    ]))
            case ("POST", let s) where s == ["inApps", "v1", "notifications", "history"]:
                let request = try JSONObject(body)
                let (from, to) = (try request.int("startDate"), try request.int("endDate"))
                let matching = records.notifications.filter { $0.signedDate >= from && $0.signedDate <= to }.map(\.ref)
                guard let start = PathAndQuery.position(query["paginationToken"]) else {
                    return Self.json(400, #"{"errorCode":4000006,"errorMessage":"Invalid pagination token."}"#)
                }
                let page = Array(matching.dropFirst(start).prefix(2))
                let end = start + page.count
                var answer: [String: Any] = [
                    "notificationHistory": try page.map {
                        [
                            "signedPayload": try journal.read($0).notification?.payload ?? "",
                            "sendAttempts": [] as [Any],
                        ]
                    },
                    "hasMore": end < matching.count,
                ]
                if end < matching.count { answer["paginationToken"] = String(end) }
                return Self.json(200, try Self.encode(answer))
            case ("POST", let s) where s == ["inApps", "v1", "notifications", "test"]:
                let token = UUID().uuidString.lowercased()
                testNotifications[token] = try notification(type: "TEST", signedTransaction: nil)
                return Self.json(200, try Self.encode(["testNotificationToken": token]))
            case ("GET", let s) where s.count == 5 && s[2] == "notifications" && s[3] == "test":
                guard let payload = testNotifications[s[4]] else { return Self.notFound }
                return Self.json(
                    200,
                    try Self.encode([
                        "signedPayload": payload,
                        "sendAttempts": [
                            ["attemptDate": Self.milliseconds(clock.now()), "sendAttemptResult": "SUCCESS"]
                        ],
                    ]))
            case ("GET", let s) where s.count == 4 && s[2] == "lookup":
                return Self.json(
                    200,
                    try Self.encode([
                        "status": records.count == 0 ? 1 : 0,
                        "signedTransactions": try records.first.flatMap(signedTransaction).map { [$0] } ?? [],
                    ]))
            case ("GET", let s) where s.count == 5 && s[2] == "refund":
                return Self.json(
                    200, try Self.encode(["signedTransactions": [] as [String], "revision": "0", "hasMore": false]))
            case ("PUT", let s) where s.count == 5 && s[2] == "transactions" && s[3] == "consumption":
                guard records.line(of: s[4]) != nil else { return Self.notFound }
                guard (try? JSONObject(body).optionalBool("customerConsented")) == true else {
                    return Self.json(400, #"{"errorCode":4000130,"errorMessage":"Invalid customer consented."}"#)
                }
                consumptionReports[s[4]] = body
                return ProviderHTTPResponse(status: 202, headers: [:], body: [])
            default:
                return Self.json(404, #"{"errorCode":4040000,"errorMessage":"Not found."}"#)
            }
        } catch {
            return Self.json(400, #"{"errorCode":4000000,"errorMessage":"Invalid request."}"#)
        }
    }

    /// The OCSP responder for the authority's leaves (RFC 6960 over HTTP POST).
    private func ocsp(body: [UInt8]) -> ProviderHTTPResponse {
        if faults.first == .ocspUnavailable {
            faults.removeFirst()
            return ProviderHTTPResponse(status: 503, headers: [:], body: [])
        }
        guard let responder = try? authority.ocspResponder else {
            return ProviderHTTPResponse(status: 500, headers: [:], body: [])
        }
        return ProviderHTTPResponse(
            status: 200, headers: ["Content-Type": "application/ocsp-response"],
            body: responder.respond(to: body, revokedSerials: revokedSerials, now: clock.now()))
    }

    /// `verifyReceipt`: the sandbox's receipts are sandbox receipts, so the production endpoint answers 21007.
    private func verifyReceipt(body: [UInt8], atProduction: Bool) async -> ProviderHTTPResponse {
        if faults.first == .receiptServerUnavailable {
            faults.removeFirst()
            return Self.json(200, #"{"status":21005,"is-retryable":true}"#)
        }
        guard let request = try? JSONObject(body), let data = try? request.string("receipt-data"),
            let der = try? ReceiptParser.bytes(Array(data.utf8))
        else { return Self.json(200, #"{"status":21002}"#) }
        if let sharedSecret, (try? request.optionalString("password")) != sharedSecret {
            return Self.json(200, #"{"status":21004}"#)
        }
        if atProduction { return Self.json(200, #"{"status":21007}"#) }
        guard let roots = try? AppleRootCertificates.load([receipts.rootDER], requireApple: false),
            case .valid(let receipt)? = try? await ReceiptValidator(rootCertificates: roots).validate(der)
        else { return Self.json(200, #"{"status":21003}"#) }
        let answer: [String: Any] = [
            "status": 0, "environment": "Sandbox", "receipt": receipt.json,
            "latest_receipt_info": receipt.inApp.map(\.json),
            "latest_receipt": data,
        ]
        return Self.json(200, (try? Self.encode(answer)) ?? #"{"status":21009}"#)
    }

    /// The merchant's bearer token: ES256 by the configured key, `aud` appstoreconnect-v1, our bundle, not expired.
    private func authorized(_ headers: [String: String]) -> Bool {
        guard
            let value = headers.first(where: { $0.key.caseInsensitiveCompare("Authorization") == .orderedSame })?.value,
            value.hasPrefix("Bearer ")
        else { return false }
        let parts = value.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(ArraySlice(parts[0].utf8)),
            let claimsBytes = Base64URL.decode(ArraySlice(parts[1].utf8)),
            let signatureBytes = Base64URL.decode(ArraySlice(parts[2].utf8)),
            let header = try? JSONObject(headerBytes), let claims = try? JSONObject(claimsBytes),
            (try? header.string("alg")) == "ES256", (try? header.string("kid")) == merchantKeyID,
            (try? claims.string("aud")) == "appstoreconnect-v1", (try? claims.string("bid")) == bundleID,
            let expiry = try? claims.int("exp"), expiry > Int64(clock.now().timeIntervalSince1970),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return false }
        return merchantKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
    }
}
