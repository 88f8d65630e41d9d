import HTTPTypes
import Hummingbird
import Logging

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
    static let idempotencyKey = Self("Idempotency-Key")!
}

/// Gives every request an id (the caller's `X-Request-Id` if well-formed), logs with it and echoes it back.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        let offered = request.headers.value(of: .requestID)
        let id = offered.flatMap(Self.isWellFormed) == true ? offered! : context.id
        context.logger[metadataKey: "request_id"] = .string(id)
        var response = try await next(request, context)
        response.headers[.requestID] = id
        return response
    }

    static func isWellFormed(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
            }
    }
}
