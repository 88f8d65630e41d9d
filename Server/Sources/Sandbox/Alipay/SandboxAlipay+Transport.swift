import ChannelSupport

extension SandboxAlipay {
    /// This simulator's gateway behind an ``InProcessTransport`` (every POST is a `gateway.do` call).
    public nonisolated var transport: InProcessTransport {
        InProcessTransport { _, _, _, body in
            let (status, text) = await self.gateway(body: body)
            return ProviderHTTPResponse(
                status: status, headers: ["Content-Type": "text/html;charset=utf-8"], body: Array(text.utf8))
        }
    }
}
