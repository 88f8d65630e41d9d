import ChannelSupport

extension SandboxWeChatPay {
    /// This simulator behind an ``InProcessTransport``.
    public nonisolated var transport: InProcessTransport {
        InProcessTransport { method, pathAndQuery, headers, body in
            await self.handle(method: method, pathAndQuery: pathAndQuery, headers: headers, body: body)
        }
    }
}
