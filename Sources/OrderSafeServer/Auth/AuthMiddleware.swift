import Hummingbird

/// Requires a valid user bearer token and records the user in the context.
struct UserAuthMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext
    let authenticator: UserAuthenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            context.user = try await authenticator.authenticate(authorization: request.headers[.authorization])
        } catch {
            throw APIError.unauthorized(error)
        }
        context.logger[metadataKey: "user_id"] = .string(context.user!.id)
        return try await next(request, context)
    }
}

/// Requires the admin key or a named operator key, and records the operator in the context.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext
    let keys: OperatorKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            context.operatorName = try keys.authenticate(authorization: request.headers[.authorization])
        } catch {
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
