import Foundation
import HTTPTypes
import Hummingbird
import OrderSafeModel

/// An error of the layers below the routes that has its answer to an API caller: thrown as it is, and answered by
/// ``ErrorEnvelopeMiddleware`` (no route maps it by hand).
protocol APIErrorConvertible: Error {
    var apiError: APIError { get }
}

/// An error answered to an API caller as `{"error": {"code", "message"}}` with an HTTP status.
struct APIError: HTTPResponseError, Equatable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var headers: HTTPFields = [:]

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try OrderSafeJSON.encoder().encode(APIErrorResponse(code: code, message: message))
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func badRequest(_ code: String, _ message: String) -> APIError {
        .init(status: .badRequest, code: code, message: message)
    }
    static func notFound(_ message: String) -> APIError {
        .init(status: .notFound, code: "not_found", message: message)
    }
    static func unauthorized(_ error: AuthError) -> APIError {
        .init(
            status: .unauthorized, code: "unauthorized", message: error.description,
            headers: [.wwwAuthenticate: "Bearer"])
    }
    static let internalError = APIError(
        status: .internalServerError, code: "internal_error", message: "an internal error occurred; it has been logged")
    static let unavailable = APIError(
        status: .serviceUnavailable, code: "unavailable", message: "the service is temporarily unavailable; retry later"
    )
}
