import Foundation
import HTTPTypes
import Hummingbird

/// Behind a TLS-terminating proxy (`server.trust_forwarded_for`, the only setting that mounts it): takes the client's
/// address, for every later step, as the one the proxy appended last to `X-Forwarded-For`; earlier entries are the
/// client's own word. Without the setting the header is ignored, since anyone can send it.
struct ForwardedForMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        if let forwarded = request.headers[values: .xForwardedFor].last?.split(separator: ",").last {
            let address = forwarded.trimmingCharacters(in: .whitespaces)
            if !address.isEmpty, address.utf8.count <= 64 { context.clientAddress = address }
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
