import ChannelSupport

extension SandboxAlipay {
    /// This simulator behind an ``InProcessTransport``: a POST is a `gateway.do` call, a GET of
    /// `downloadBillFile.resource` a bill download.
    public nonisolated var transport: InProcessTransport {
        InProcessTransport { method, pathAndQuery, _, body in
            if method == "GET" {
                let (path, query) = PathAndQuery.split(pathAndQuery)
                guard path.hasSuffix("/downloadBillFile.resource") else {
                    return ProviderHTTPResponse(status: 404, headers: [:], body: Array("no such file".utf8))
                }
                let (status, file) = await self.billFile(query: query)
                return ProviderHTTPResponse(
                    status: status, headers: ["Content-Type": status == 200 ? "application/zip" : "text/plain"],
                    body: file)
            }
            let (status, text) = await self.gateway(body: body)
            return ProviderHTTPResponse(
                status: status, headers: ["Content-Type": "text/html;charset=utf-8"], body: Array(text.utf8))
        }
    }
}
