import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP exchange with a provider, as bytes: the seam tests and the sandboxes plug into.
public protocol ProviderTransport: Sendable {
    /// Returns the status, the headers (names as received) and the body; throws on network failure or timeout.
    func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> ProviderHTTPResponse
}

public struct ProviderHTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension HTTPClient {
    /// The client of every provider and webhook call: it never follows a redirect, which would carry our signature
    /// and authorization headers to wherever the redirect points. Lives as long as the process, like `.shared`.
    public static let providers = HTTPClient(configuration: Configuration(redirectConfiguration: .disallow))

    /// The client that pushes notifications to another party's server — our webhooks to the merchant's, and the
    /// sandboxes' notifications as Apple's, Alipay's and WeChat Pay's servers post them: as ``providers``, but a
    /// connection that cannot be made fails the attempt at once, as a refused TCP connection does. By default
    /// AsyncHTTPClient tries to connect again until the request's deadline, so each event sent to a merchant's server
    /// that was restarting took its whole 10-second timeout (a webhook pass of 16 events, 160 s, and the events after
    /// them waited; a sandbox's sixteen WeChat Pay attempts, 160 s); the senders retry on their own schedules instead.
    public static let notifications: HTTPClient = {
        var configuration = Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(configuration: configuration)
    }()
}

/// The real transport over async-http-client.
public struct HTTPClientProviderTransport: ProviderTransport {
    let client: HTTPClient
    let maxResponseBytes: Int

    public init(client: HTTPClient = .providers, maxResponseBytes: Int = 16 << 20) {
        self.client = client
        self.maxResponseBytes = maxResponseBytes
    }

    public func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration)
        async throws
        -> ProviderHTTPResponse
    {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
        // Read straight into the answer's bytes (no whole-body buffer copied once more); a body past the limit,
        // announced or not, is refused as soon as it is known (``ProviderResponseTooLarge``: not retried).
        var body: [UInt8] = []
        if let announced = response.headers.first(name: "content-length").flatMap({ Int($0) }) {
            guard announced <= maxResponseBytes else { throw ProviderResponseTooLarge(limit: maxResponseBytes) }
            body.reserveCapacity(announced)
        }
        for try await chunk in response.body {
            guard chunk.readableBytes <= maxResponseBytes - body.count else {
                throw ProviderResponseTooLarge(limit: maxResponseBytes)
            }
            body.append(contentsOf: chunk.readableBytesView)
        }
        var received: [String: String] = [:]
        for header in response.headers { received[header.name] = header.value }
        return ProviderHTTPResponse(status: Int(response.status.code), headers: received, body: body)
    }
}
