import ChannelSupport
import Foundation

/// Sends one form POST to the gateway: the seam tests and the sandbox plug into.
public protocol AlipayTransport: Sendable {
    /// Returns the HTTP status and body; throws on network failure or timeout.
    func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8])
}

/// The real transport: a form POST over the shared provider transport (async-http-client).
public struct HTTPClientAlipayTransport: AlipayTransport {
    let transport: any ProviderTransport

    public init(transport: any ProviderTransport = HTTPClientProviderTransport(maxResponseBytes: 1 << 20)) {
        self.transport = transport
    }

    public func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
        let response = try await transport.send(
            method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded;charset=utf-8"],
            body: Array(form.utf8),
            timeout: timeout)
        return (response.status, response.body)
    }
}
