import ChannelSupport

extension SandboxAlipay {
    /// This simulator behind an ``InProcessTransport``: a GET of `downloadBillFile.resource` is a bill download,
    /// anything else a `gateway.do` call (its parameters in the query string, the body, or both).
    public nonisolated var transport: InProcessTransport {
        InProcessTransport { method, pathAndQuery, _, body in
            let (path, query) = PathAndQuery.split(pathAndQuery)
            if method == "GET", path.hasSuffix("/downloadBillFile.resource") {
                let (status, file) = await self.billFile(query: query)
                return ProviderHTTPResponse(
                    status: status, headers: ["Content-Type": status == 200 ? "application/zip" : "text/plain"],
                    body: file)
            }
            guard path.hasSuffix("/gateway.do") else {
                return ProviderHTTPResponse(status: 404, headers: [:], body: Array("no such file".utf8))
            }
            let rawQuery = pathAndQuery.firstIndex(of: "?").map { Array(pathAndQuery[$0...].dropFirst().utf8) } ?? []
            let (status, text) = await self.gateway(query: rawQuery, body: body)
            return ProviderHTTPResponse(
                status: status, headers: ["Content-Type": "text/html;charset=utf-8"], body: Array(text.utf8))
        }
    }
}
