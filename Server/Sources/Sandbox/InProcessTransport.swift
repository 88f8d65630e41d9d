import ChannelSupport
import Foundation

/// Calls a simulator in process, as if over HTTP (path and query as sent, headers, body), honouring the caller's
/// timeout: for tests, the demo and the server's own sandbox, without a network hop.
public struct InProcessTransport: ProviderTransport {
    public typealias Handler =
        @Sendable (_ method: String, _ pathAndQuery: String, _ headers: [String: String], _ body: [UInt8]) async
        -> ProviderHTTPResponse

    let handler: Handler

    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    public func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration)
        async throws
        -> ProviderHTTPResponse
    {
        guard let components = URLComponents(string: url) else { throw URLError(.badURL) }
        let pathAndQuery = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        return try await withThrowingTaskGroup(of: ProviderHTTPResponse?.self) { group in
            group.addTask { await handler(method, pathAndQuery, headers, body) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let response = try await group.next() ?? nil else { throw URLError(.timedOut) }
            return response
        }
    }
}
