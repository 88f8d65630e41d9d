import Hummingbird

/// Requires a valid user bearer token and records the user in the context. A refused token spends its address's
/// budget (`addresses`), which the address limit spared it (``UserRoutes/isSignedIn(_:)``): forged tokens
/// are limited per address, real users each by their own budget.
struct UserAuthMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext
    let authenticator: UserAuthenticator
    /// The per-address limiter, when there is one.
    let addresses: RateLimiter?
    let userRoutes: UserRoutes

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        let user = try await user(of: request, context: context)
        context.user = user
        context.logger[metadataKey: "user_id"] = .string(user.id)
        return try await next(request, context)
    }

    /// The request's user, or the refusal its token earns (spending its address's budget).
    func user(of request: Request, context: Context) async throws -> AuthenticatedUser {
        do {
            return try await authenticator.authenticate(authorization: request.headers.value(of: .authorization))
        } catch {
            if let addresses, userRoutes.isSignedIn(request),
                let retryAfter = addresses.take("address:" + (context.clientAddress ?? "unknown"))
            {
                throw RateLimitMiddleware.refusal(retryAfter: retryAfter)
            }
            throw APIError.unauthorized(error)
        }
    }
}

/// Requires the admin key or a named operator key, and records the operator in the context.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext
    let keys: OperatorKeys
    /// Wrong keys per address (shared with the console's sign-in): once spent, the address gets 429 until it refills;
    /// a right key spends nothing.
    let wrongKeys: RateLimiter

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        let address = context.clientAddress ?? "unknown"
        if wrongKeys.isSpent("sign-in:" + address) {
            context.logger.warning("admin API refused: too many wrong keys", metadata: ["address": "\(address)"])
            throw APIError(
                status: .tooManyRequests, code: "rate_limited",
                message: "too many wrong keys from this address; retry after 60 s",
                headers: [.retryAfter: "60"])
        }
        do {
            context.operatorName = try keys.authenticate(authorization: request.headers.value(of: .authorization))
        } catch {
            if request.headers.value(of: .authorization) != nil {  // a key was tried (no key at all guesses nothing)
                _ = wrongKeys.take("sign-in:" + address)
                context.logger.warning("admin API key refused", metadata: ["address": "\(address)"])
            }
            throw APIError.unauthorized(error)
        }
        context.logger[metadataKey: "operator"] = .string(context.operatorName ?? "")
        return try await next(request, context)
    }
}

extension OrderSafeRequestContext {
    /// The authenticated user; only reachable behind ``UserAuthMiddleware``.
    func requireUser() throws -> AuthenticatedUser {
        guard let user else { throw APIError.unauthorized(.missingToken) }
        return user
    }
}
