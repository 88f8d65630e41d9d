import Foundation
import Hummingbird

/// The sandbox Alipay over HTTP: `POST` or `GET {prefix}/gateway.do` (the open-platform gateway, its parameters in
/// the query string, the form body or both),
/// `GET {prefix}/downloadBillFile.resource` (a day's trade bill, where the gateway's download URL points),
/// `POST {prefix}/pay` (what the Alipay app does when the user confirms: body = the order string), and
/// `POST {prefix}/faults` (faults for the next notifications and gateway calls, see ``AlipayFaultRequest``).
public struct SandboxAlipayRoutes<Context: RequestContext>: Sendable {
    let alipay: SandboxAlipay

    public init(alipay: SandboxAlipay) {
        self.alipay = alipay
    }

    public func addRoutes(to group: RouterGroup<Context>) {
        let gateway: @Sendable (Request, Context) async throws -> Response = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64 * 1024)
            let (status, text) = await alipay.gateway(
                query: Array((request.uri.query ?? "").utf8), body: Array(buffer: body))
            return Response(
                status: .init(code: status), headers: [.contentType: "application/json;charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        group.post("gateway.do", use: gateway)
        group.get("gateway.do", use: gateway)
        group.get("downloadBillFile.resource") { request, _ in
            var query: [String: String] = [:]
            for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
            let (status, file) = await alipay.billFile(query: query)
            return Response(
                status: .init(code: status), headers: [.contentType: status == 200 ? "application/zip" : "text/plain"],
                body: .init(byteBuffer: ByteBuffer(bytes: file)))
        }
        group.get("payments") { _, _ in
            SandboxJSONObject.payments(await alipay.payments)
        }
        group.post("faults") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            do {
                let faults = try SandboxJSON.decode(AlipayFaultRequest.self, from: Array(buffer: body))
                let notifications = try faults.notificationFaults()
                let gateway = try faults.gatewayFaults()
                for fault in notifications { await alipay.injectNotificationFault(fault) }
                for fault in gateway { await alipay.injectGatewayFault(fault) }
                if let lag = try faults.queryLag() { await alipay.setQueryLag(lag) }
                if let now = faults.bills_now { await alipay.publishBillsAtOnce(now) }
                return SandboxJSON.response(["queued": "\(notifications.count + gateway.count)"], status: .ok)
            } catch {
                return SandboxJSON.response(["error": "\(error)"], status: .badRequest)
            }
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
                return SandboxJSON.response(["resultStatus": "4000", "memo": "\(error)"], status: .badRequest)
            }
        }
    }
}
