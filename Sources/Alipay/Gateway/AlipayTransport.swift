import AsyncHTTPClient
import Foundation
import NIOCore

/// Sends one form POST to the gateway: the seam tests and the sandbox plug into.
public protocol AlipayTransport: Sendable {
    /// Returns the HTTP status and body; throws on network failure or timeout.
    func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8])
}

/// The real transport over async-http-client.
public struct HTTPClientAlipayTransport: AlipayTransport {
    let client: HTTPClient
    let maxResponseBytes: Int

    public init(client: HTTPClient = .shared, maxResponseBytes: Int = 1 << 20) {
        self.client = client
        self.maxResponseBytes = maxResponseBytes
    }

    public func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded;charset=utf-8")
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
        var body = try await response.body.collect(upTo: maxResponseBytes)
        return (Int(response.status.code), body.readBytes(length: body.readableBytes) ?? [])
    }
}
