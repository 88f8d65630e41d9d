import Hummingbird

/// Answers 429 with `Retry-After` when the caller's bucket is empty. The caller is the authenticated user behind
/// ``UserAuthMiddleware``, otherwise the client address (see ``ForwardedForMiddleware``). A request with a user token to a
/// user route is not the address's: carrier-grade NAT puts thousands of phones behind one address, so signed-in
/// users are limited each on their own, and a token that fails spends its address's budget instead
/// (``UserAuthMiddleware``).
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext

    enum Key {
        case user, address
    }

    let limiter: RateLimiter
    let key: Key
    let userRoutes: UserRoutes

    /// The orchestrator's probes: a bucket of their own per address, so that a flood of other requests from the
    /// orchestrator's address (or a NAT it shares) never makes a healthy server look down.
    static let probes: Set<String> = ["/healthz", "/readyz"]

    static func refusal(retryAfter: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "rate_limited", message: "too many requests; retry after \(retryAfter) s",
            headers: [.retryAfter: "\(retryAfter)"])
    }

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        let caller: String
        switch key {
        case .user:
            caller = "user:" + (context.user?.id ?? "-")
        case .address:
            if userRoutes.isSignedIn(request) { return try await next(request, context) }
            caller =
                (Self.probes.contains(request.uri.path) ? "probe:" : "address:") + (context.clientAddress ?? "unknown")
        }
        if let retryAfter = limiter.take(caller) { throw Self.refusal(retryAfter: retryAfter) }
        return try await next(request, context)
    }
}

/// The paths of the routes behind ``UserAuthMiddleware`` (the `users` group of ``OrderSafeApplication``): the
/// orders', the user's own, and each registered channel's.
struct UserRoutes: Sendable {
    let prefixes: [String]

    init(registry: ChannelRegistry) {
        prefixes = ["/v1/orders/", "/v1/me/"] + registry.all.compactMap { $0.userRoutePrefix }
    }

    /// A request the address does not answer for: a bearer token to a user route.
    func isSignedIn(_ request: Request) -> Bool {
        guard request.headers.value(of: .authorization)?.hasPrefix("Bearer ") == true else { return false }
        let path = request.uri.path
        return path == "/v1/orders" || prefixes.contains { path.hasPrefix($0) }
    }
}
