import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP exchange with WeChat Pay, as bytes: the seam tests and the sandbox plug into.
public protocol WeChatPayTransport: Sendable {
    /// Returns the status, the headers (names as received) and the body; throws on network failure or timeout.
    func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> WeChatPayHTTPResponse
}

public struct WeChatPayHTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// The real transport over async-http-client.
public struct HTTPClientWeChatPayTransport: WeChatPayTransport {
    let client: HTTPClient
    let maxResponseBytes: Int

    public init(client: HTTPClient = .shared, maxResponseBytes: Int = 16 << 20) {
        self.client = client
        self.maxResponseBytes = maxResponseBytes
    }

    public func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> WeChatPayHTTPResponse
    {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
        var bytes = try await response.body.collect(upTo: maxResponseBytes)
        var received: [String: String] = [:]
        for header in response.headers { received[header.name] = header.value }
        return WeChatPayHTTPResponse(
            status: Int(response.status.code), headers: received, body: bytes.readBytes(length: bytes.readableBytes) ?? [])
    }
}
