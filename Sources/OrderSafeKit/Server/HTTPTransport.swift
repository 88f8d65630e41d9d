import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with the OrderSafe server. ``URLSessionTransport`` is the real one; tests script their own.
public protocol HTTPTransport: Sendable {
    func send(_ request: URLRequest) async throws -> (status: Int, body: Data)
}

/// `URLSession`, with a request timeout and a cap on what an answer may weigh.
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let maxResponseBytes: Int

    public init(timeout: TimeInterval = 20, maxResponseBytes: Int = 1 << 20) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
        self.maxResponseBytes = maxResponseBytes
    }

    public func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        // Not a child task: a request once sent is seen through even if the caller is cancelled (a submission's
        // verdict is worth having), and swift-corelibs-foundation's URLSession deadlocks when a task is cancelled
        // while its answer is being delivered.
        let session = session
        let (data, response) = try await Task { try await session.data(for: request) }.value
        guard let http = response as? HTTPURLResponse else {
            throw ServerProblem.malformedAnswer("not an HTTP response")
        }
        guard data.count <= maxResponseBytes else {
            throw ServerProblem.malformedAnswer("an answer of \(data.count) bytes")
        }
        return (http.statusCode, data)
    }
}
