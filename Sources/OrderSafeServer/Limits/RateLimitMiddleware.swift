import Hummingbird

/// Answers 429 with `Retry-After` when the caller's bucket is empty. The caller is the authenticated user behind
/// ``UserAuthMiddleware``, otherwise the client address (see ``ClientAddress``).
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext

    enum Key {
        case user, address
    }

    let limiter: RateLimiter
    let key: Key

    /// The orchestrator's probes: a bucket of their own per address, so that a flood of other requests from the
    /// orchestrator's address (or a NAT it shares) never makes a healthy server look down.
    static let probes: Set<String> = ["/healthz", "/readyz"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller: String =
            switch key {
            case .user: "user:" + (context.user?.id ?? "-")
            case .address: (Self.probes.contains(request.uri.path) ? "probe:" : "address:") + (context.clientAddress ?? "unknown")
            }
        if let retryAfter = limiter.take(caller) {
            throw APIError(
                status: .tooManyRequests, code: "rate_limited",
                message: "too many requests; retry after \(retryAfter) s", headers: [.retryAfter: "\(retryAfter)"])
        }
        return try await next(request, context)
    }
}
