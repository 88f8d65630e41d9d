import Foundation
import OrderSafeModel

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The OrderSafe server's user API, typed with the same wire types the server encodes (OrderSafeModel).
struct OrderSafeAPI: Sendable {
    let baseURL: URL
    let token: @Sendable () async throws -> String
    /// The app's refresh of a refused token; nil: a 401 is final for the call.
    let refresh: TokenRefresh?
    let transport: any HTTPTransport

    func catalog() async throws -> CatalogResponse {
        try await call("GET", "v1/catalog", authenticated: false)
    }

    /// The catalog with the signed-in user's introductory-offer eligibility.
    func catalogForUser() async throws -> CatalogResponse {
        try await call("GET", "v1/catalog")
    }

    /// Subscription offer `offerID` signed for the purchase of order `orderNo`.
    func signOffer(_ offerID: String, orderNo: String) async throws -> AppStoreOfferSignature {
        try await call(
            "POST", "v1/appstore/offers/\(Self.segment(offerID))/signature", body: ["order_no": orderNo])
    }

    /// Creates the order, or returns the one `idempotencyKey` already created (with fresh invoke parameters).
    func createOrder(productID: String, channel: Channel, idempotencyKey: String) async throws -> OrderResponse {
        try await call(
            "POST", "v1/orders", body: CreateOrderRequest(productID: productID, channel: channel),
            headers: ["Idempotency-Key": idempotencyKey])
    }

    func order(_ orderNo: String) async throws -> Order {
        try await orderResponse(orderNo).order
    }

    /// The order with its payment's provider id, once paid.
    func orderResponse(_ orderNo: String) async throws -> OrderResponse {
        try await call("GET", "v1/orders/\(Self.segment(orderNo))")
    }

    /// The order as the provider's word leaves it, and what the provider said when asked now.
    func clientResult(_ orderNo: String, result: ClientResultRequest) async throws -> OrderResponse {
        try await call("POST", "v1/orders/\(Self.segment(orderNo))/client-result", body: result)
    }

    func cancel(_ orderNo: String) async throws -> Order {
        let response: OrderResponse = try await call("POST", "v1/orders/\(Self.segment(orderNo))/cancel")
        return response.order
    }

    func submit(signedTransaction: String) async throws -> AppStoreSubmissionResponse {
        try await call(
            "POST", "v1/appstore/transactions", body: AppStoreSubmission(signedTransaction: signedTransaction))
    }

    func sync(signedTransactions: [String]) async throws -> AppStoreSubmissionResponse {
        try await call("POST", "v1/appstore/sync", body: AppStoreSyncRequest(signedTransactions: signedTransactions))
    }

    func submitAppTransaction(_ signed: String) async throws -> AppPurchasesResponse {
        try await call(
            "POST", "v1/appstore/app-transaction", body: AppTransactionSubmission(signedAppTransaction: signed))
    }

    func appPurchases() async throws -> AppPurchasesResponse {
        try await call("GET", "v1/appstore/app-transaction")
    }

    func entitlements() async throws -> HoldingsResponse {
        try await call("GET", "v1/me/entitlements")
    }

    func subscriptions() async throws -> SubscriptionsResponse {
        try await call("GET", "v1/me/subscriptions")
    }

    func orderHistory(after cursor: String?, limit: Int) async throws -> OrderHistoryResponse {
        var query = [URLQueryItem(name: "limit", value: String(limit))]
        if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        return try await call("GET", "v1/me/orders", query: query)
    }

    private func call<Answer: Decodable, Body: Encodable>(
        _ method: String, _ path: String, body: Body, headers: [String: String] = [:]
    ) async throws -> Answer {
        try await call(
            method, path, encoded: try OrderSafeJSON.encoder().encode(body), headers: headers, authenticated: true)
    }

    private func call<Answer: Decodable>(
        _ method: String, _ path: String, encoded body: Data? = nil, headers: [String: String] = [:],
        query: [URLQueryItem] = [], authenticated: Bool = true
    ) async throws -> Answer {
        var url = baseURL.appendingPathComponent(path)
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query
            url = components.url ?? url
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        var bearer: String?
        if authenticated {
            do {
                bearer = try await token()
            } catch {
                throw ServerProblem.signedOut
            }
            request.setValue("Bearer \(bearer ?? "")", forHTTPHeaderField: "Authorization")
        }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        var (status, data) = try await send(request)
        if status == 401, let refused = bearer, let refresh, let fresh = try? await refresh.fresh(after: refused),
            fresh != refused
        {
            // The token expired: once more with the app's fresh one.
            request.setValue("Bearer \(fresh)", forHTTPHeaderField: "Authorization")
            (status, data) = try await send(request)
        }
        guard (200..<300).contains(status) else {
            let detail = (try? OrderSafeJSON.decoder().decode(APIErrorResponse.self, from: data))?.error
            if status == 429 || status >= 500 {
                throw ServerProblem.unavailable(status: status, code: detail?.code ?? "unavailable")
            }
            throw ServerProblem.refused(
                status: status, code: detail?.code ?? "http_\(status)", message: detail?.message ?? "")
        }
        do {
            return try OrderSafeJSON.decoder().decode(Answer.self, from: data)
        } catch {
            throw ServerProblem.malformedAnswer("\(Answer.self)")
        }
    }

    private func send(_ request: URLRequest) async throws -> (Int, Data) {
        do {
            return try await transport.send(request)
        } catch let problem as ServerProblem {
            throw problem
        } catch {
            throw ServerProblem.unreachable(Self.reason(error))
        }
    }

    /// An order number as one path segment. Order numbers are ASCII letters, digits, `-` and `_`; anything else
    /// (a corrupt journal entry) becomes a segment no order has, so the server answers 404 instead of the request
    /// reaching another path.
    static func segment(_ text: String) -> String {
        let safe =
            !text.isEmpty && text.count <= 64
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_")
            }
        return safe ? text : "_"
    }

    /// A short reason for a transport failure, without the URL (which could carry identifiers).
    static func reason(_ error: any Error) -> String {
        if let error = error as? URLError { return "URLError \(error.code.rawValue)" }
        return String(describing: type(of: error))
    }
}
