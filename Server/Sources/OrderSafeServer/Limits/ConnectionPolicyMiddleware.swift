import Foundation
import HTTPTypes
import Hummingbird

/// Sets what every later step reads about the caller's connection: how long a body may take to arrive, and the
/// client's address. Behind a TLS-terminating proxy (`server.trust_forwarded_for`) the client is the address the
/// proxy appended last to `X-Forwarded-For`; earlier entries are the client's own word. Without the setting the
/// header is ignored, since anyone can send it.
struct ConnectionPolicyMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext

    let trustForwardedFor: Bool
    let bodyDeadline: Duration

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        context.bodyDeadline = bodyDeadline
        if trustForwardedFor, let forwarded = request.headers[values: .xForwardedFor].last?.split(separator: ",").last {
            let address = forwarded.trimmingCharacters(in: .whitespaces)
            if !address.isEmpty, address.utf8.count <= 64 { context.clientAddress = address }
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
