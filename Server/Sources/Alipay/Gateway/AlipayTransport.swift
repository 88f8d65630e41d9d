import ChannelSupport
import Foundation

/// Sends one form POST to the gateway, or fetches a bill: the seam tests and the sandbox plug into.
public protocol AlipayTransport: Sendable {
    /// Returns the HTTP status and body; throws on network failure or timeout.
    func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8])
    /// Fetches a file (a bill) by GET: the HTTP status and body; throws on network failure or timeout.
    func get(url: String, timeout: Duration) async throws -> (status: Int, body: [UInt8])
}

/// The real transport over the shared provider transport (async-http-client), whose size limit must admit bills.
public struct HTTPClientAlipayTransport: AlipayTransport {
    let transport: any ProviderTransport

    public init(transport: any ProviderTransport = HTTPClientProviderTransport(maxResponseBytes: 256 << 20)) {
        self.transport = transport
    }

    public func post(url: String, form: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
        let response = try await transport.send(
            method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded;charset=utf-8"],
            body: Array(form.utf8),
            timeout: timeout)
        return (response.status, response.body)
    }

    public func get(url: String, timeout: Duration) async throws -> (status: Int, body: [UInt8]) {
        let response = try await transport.send(method: "GET", url: url, headers: [:], body: [], timeout: timeout)
        return (response.status, response.body)
    }
}
