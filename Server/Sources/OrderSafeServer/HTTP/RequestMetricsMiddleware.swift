import Dispatch
import HTTPTypes
import Hummingbird
import Metrics
import Synchronization

/// Counts and times requests by route, method and status under the names of Hummingbird's `MetricsMiddleware`
/// (`hb_requests`, `http_server_request_duration`, `hb_request_errors`, `http_server_active_requests`), recorded once
/// the response is made. Hummingbird's records once the body is written, by wrapping the body in a closure, and a
/// body that is a closure leaves Hummingbird's path for one buffer (head, body and end sent as one write): each
/// answer went out in two `write` calls, from three hand-offs to its connection's event loop (`strace` under load,
/// docs/benchmarks.md). Every answer here is one buffer, so the two times differ by the writing of that buffer.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let metrics = RequestMetrics()

    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = DispatchTime.now().uptimeNanoseconds
        let active = metrics.active(request.method)
        active.increment()
        defer { active.decrement() }
        do {
            let response = try await next(request, context)
            let endpoint = metrics.endpoint(context.endpointPath ?? "Unknown", request.method, response.status)
            endpoint.requests.increment()
            endpoint.duration.recordNanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds &- start))
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let endpoint = metrics.endpoint(context.endpointPath ?? "NotFound", request.method, status)
            endpoint.requests.increment()
            endpoint.errors.increment()
            throw error
        }
    }
}

/// The metrics of ``RequestMetricsMiddleware``, made once per method and per route, method and status.
final class RequestMetrics: Sendable {
    struct Endpoint: Sendable {
        let requests: Counter
        let duration: Timer
        let errors: Counter
    }

    private struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    private let meters = Mutex<[HTTPRequest.Method: Meter]>([:])
    private let endpoints = Mutex<[Key: Endpoint]>([:])

    /// The meter of requests being answered with `method`.
    func active(_ method: HTTPRequest.Method) -> Meter {
        meters.withLock { meters in
            if let meter = meters[method] { return meter }
            let meter = Meter(
                label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)])
            meters[method] = meter
            return meter
        }
    }

    func endpoint(_ route: String, _ method: HTTPRequest.Method, _ status: HTTPResponse.Status) -> Endpoint {
        let key = Key(route: route, method: method, status: status.code)
        return endpoints.withLock { endpoints in
            if let endpoint = endpoints[key] { return endpoint }
            let dimensions = [
                ("http.route", route), ("http.request.method", method.rawValue),
                ("http.response.status_code", String(status.code)),
            ]
            let endpoint = Endpoint(
                requests: Counter(label: "hb.requests", dimensions: dimensions),
                duration: Timer(
                    label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds),
                errors: Counter(
                    label: "hb.request.errors",
                    dimensions: [
                        ("http.route", route), ("http.request.method", method.rawValue),
                        ("error.type", String(status.code)),
                    ]))
            endpoints[key] = endpoint
            return endpoint
        }
    }
}
