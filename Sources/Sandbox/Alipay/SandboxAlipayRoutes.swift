import Foundation
import Hummingbird

/// The sandbox Alipay over HTTP: `POST {prefix}/gateway.do` (the open-platform gateway) and
/// `POST {prefix}/pay` (what the Alipay app does when the user confirms: body = the order string).
public struct SandboxAlipayRoutes<Context: RequestContext>: Sendable {
    let alipay: SandboxAlipay

    public init(alipay: SandboxAlipay) {
        self.alipay = alipay
    }

    public func addRoutes(to group: RouterGroup<Context>) {
        group.post("gateway.do") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64 * 1024)
            let (status, text) = await alipay.gateway(body: Array(buffer: body))
            return Response(
                status: .init(code: status), headers: [.contentType: "application/json;charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        group.post("pay") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64 * 1024)
            do {
                let tradeNo = try await alipay.open(orderString: String(buffer: body))
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"resultStatus":"9000","trade_no":"\#(tradeNo)"}"#)))
            } catch {
                let body = try JSONEncoder().encode(["resultStatus": "4000", "memo": "\(error)"])
                return Response(
                    status: .badRequest, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
        }
    }
}
