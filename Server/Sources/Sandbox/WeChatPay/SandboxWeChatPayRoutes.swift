import Foundation
import Hummingbird
import OrderSafeModel
import WeChatPay

/// The sandbox WeChat Pay over HTTP: the v3 API under `{prefix}/v3/…`, `POST {prefix}/pay` (what the WeChat app
/// does with the invoke parameters: body = their JSON), and `POST {prefix}/faults` (see ``WeChatPayFaultRequest``).
public struct SandboxWeChatPayRoutes<Context: RequestContext>: Sendable {
    let wechatpay: SandboxWeChatPay

    public init(wechatpay: SandboxWeChatPay) {
        self.wechatpay = wechatpay
    }

    public func addRoutes(to group: RouterGroup<Context>) {
        let handler = wechatpay.transport.handler
        let api: @Sendable (Request, Context) async throws -> Response = { request, _ in
            try await SimulatorBridge.forward(request, limit: 64 * 1024, to: handler)
        }
        for (method, path) in SandboxWeChatPayAPI.routes {
            group.on(RouterPath(path), method: method == "GET" ? .get : .post, use: api)
        }
        group.get("payments") { _, _ in
            SandboxJSONObject.payments(await wechatpay.payments)
        }
        group.post("faults") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            do {
                let faults = try SandboxJSON.decode(WeChatPayFaultRequest.self, from: Array(buffer: body))
                let notifications = try faults.notificationFaults()
                let api = try faults.apiFaults()
                let lag = try faults.queryLag()
                for fault in notifications { await wechatpay.injectNotificationFault(fault) }
                for fault in api { await wechatpay.injectAPIFault(fault) }
                if faults.rotate_certificate == true { try await wechatpay.rotatePlatformCertificate() }
                if let lag { await wechatpay.setQueryLag(lag) }
                if let now = faults.bills_now { await wechatpay.publishBillsAtOnce(now) }
                return SandboxJSON.response(["queued": "\(notifications.count + api.count)"], status: .ok)
            } catch {
                return SandboxJSON.response(["error": "\(error)"], status: .badRequest)
            }
        }
        group.post("pay") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            do {
                let invocation = try JSONDecoder().decode(WeChatPayInvocation.self, from: Data(buffer: body))
                let outTradeNo = try await wechatpay.open(invocation)
                return SandboxJSON.response(["errCode": "0", "out_trade_no": outTradeNo], status: .ok)
            } catch {
                return SandboxJSON.response(["errCode": "-1", "errStr": "\(error)"], status: .badRequest)
            }
        }
    }
}

/// The WeChat Pay API v3 endpoints the sandbox serves.
public enum SandboxWeChatPayAPI {
    public static let routes: [(method: String, path: String)] = [
        ("POST", "v3/pay/transactions/app"),
        ("GET", "v3/pay/transactions/out-trade-no/:out_trade_no"),
        ("GET", "v3/pay/transactions/id/:transaction_id"),
        ("POST", "v3/pay/transactions/out-trade-no/:out_trade_no/close"),
        ("POST", "v3/refund/domestic/refunds"),
        ("GET", "v3/refund/domestic/refunds/:out_refund_no"),
        ("GET", "v3/bill/tradebill"),
        ("GET", "v3/bill/fundflowbill"),
        ("GET", "v3/billdownload/file"),
        ("GET", "v3/certificates"),
    ]
}
