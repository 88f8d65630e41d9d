import Foundation
import HTTPTypes
import Hummingbird

/// The API's paths and their methods, read from the OpenAPI document the server serves.
struct RouteTable: Sendable {
    private let routes: [(segments: [String], methods: [String])]

    /// `unmounted`: path prefixes this server does not serve (the simulators in production), which stay 404.
    init(openAPIDocument: Data, unmounted: [String] = []) throws {
        let object = try JSONSerialization.jsonObject(with: openAPIDocument) as? [String: Any]
        let paths = object?["paths"] as? [String: [String: Any]] ?? [:]
        routes = paths.filter { path, _ in !unmounted.contains { path.hasPrefix($0) } }.map { path, operations in
            (path.split(separator: "/").map(String.init), operations.keys.map { $0.uppercased() }.sorted())
        }
    }

    /// The methods the document gives for `path`, or nil when no documented path matches it.
    func methods(for path: String) -> [String]? {
        let segments = path.split(separator: "/").map(String.init)
        let matching = routes.filter { route in
            route.segments.count == segments.count
                && zip(route.segments, segments).allSatisfy { template, segment in
                    template.hasPrefix("{") || template == segment
                }
        }
        return matching.isEmpty ? nil : Array(Set(matching.flatMap(\.methods))).sorted()
    }
}

/// A method the path does not have is 405 with `Allow`, not the router's 404 (which says the path is not there).
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = OrderSafeRequestContext
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = routes.methods(for: request.uri.path), !allowed.contains(request.method.rawValue) else {
                throw error
            }
            throw APIError(
                status: .methodNotAllowed, code: "method_not_allowed",
                message: "\(request.method.rawValue) is not allowed here; use \(allowed.joined(separator: ", "))",
                headers: [.allow: allowed.joined(separator: ", ")])
        }
    }
}
