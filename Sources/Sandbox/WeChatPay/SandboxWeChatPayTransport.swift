import ChannelSupport
import Foundation
import WeChatPay

/// Calls a ``SandboxWeChatPay`` in process, as if over HTTP: for tests and the demo without a listening server.
public struct SandboxWeChatPayTransport: ProviderTransport {
    let sandbox: SandboxWeChatPay

    public init(_ sandbox: SandboxWeChatPay) {
        self.sandbox = sandbox
    }

    public func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> ProviderHTTPResponse
    {
        guard let components = URLComponents(string: url) else { throw URLError(.badURL) }
        let pathAndQuery = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        return try await withThrowingTaskGroup(of: ProviderHTTPResponse?.self) { group in
            group.addTask { await sandbox.handle(method: method, pathAndQuery: pathAndQuery, headers: headers, body: body) }
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
