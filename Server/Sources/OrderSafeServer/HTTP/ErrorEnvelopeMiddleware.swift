import Hummingbird
import Logging
import NIOHTTP1

/// Turns every error into the API's JSON error body; anything unexpected becomes a logged 500.
struct ErrorEnvelopeMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try error.response(from: request, context: context)
        } catch let error as any APIErrorConvertible {
            return try error.apiError.response(from: request, context: context)
        } catch let error as HTTPError {
            return try Self.envelope(for: error).response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            return try Self.envelope(for: HTTPError(error.status)).response(from: request, context: context)
        } catch let error as HTTPParserError {
            // The client's bytes, not the server: most often an app killed or gone offline while it sent its body
            // (`invalidEOFState`, "stream ended at an unexpected time"). A 400, which it will likely never read; not
            // an error of the server's, which would count a 500 for an operator's alerts.
            context.logger.info("request cut short or malformed", metadata: ["reason": "\(String(reflecting: error))"])
            return try APIError.badRequest("bad_request", "the request ended early or was malformed")
                .response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return try APIError.internalError.response(from: request, context: context)
        }
    }

    /// Hummingbird's own errors (no route, body too large, …) in the API's shape.
    static func envelope(for error: HTTPError) -> APIError {
        let code: String =
            switch error.status {
            case .notFound: "not_found"
            case .methodNotAllowed: "method_not_allowed"
            case .contentTooLarge: "body_too_large"
            case .unsupportedMediaType: "unsupported_media_type"
            case .badRequest: "bad_request"
            default: error.status.code >= 500 ? "internal_error" : "bad_request"
            }
        let message = error.body ?? (error.status == .notFound ? "no such route" : error.status.reasonPhrase)
        return APIError(status: error.status, code: code, message: message, headers: error.headers)
    }
}
