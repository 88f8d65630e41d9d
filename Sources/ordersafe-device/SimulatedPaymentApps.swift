import Foundation
import OrderSafeKit

#if canImport(Glibc)
import Glibc
#endif

/// The Alipay and WeChat apps of the simulated device: they pay through the sandboxes' `pay` routes (what the
/// real apps do when the user confirms) and answer as the vendor SDKs do.
struct SimulatedPaymentApps: AlipayBridge, WeChatPayBridge {
    let server: URL
    /// False: the user backs out of the payment app.
    let confirms: Bool
    /// The app gets SIGKILL right after the payment app took the money (for demonstrations).
    var killedAfterPayment = false

    func pay(orderString: String) async -> AlipayResult {
        guard confirms else { return AlipayResult(resultStatus: "6001", memo: "用户中途取消") }
        guard let answer = try? await SandboxCalls(server: server).post("sandbox/alipay/pay", body: Data(orderString.utf8)) else {
            return AlipayResult(resultStatus: "6002", memo: "网络连接出错")
        }
        if killedAfterPayment { kill(getpid(), SIGKILL) }
        return AlipayResult(dictionary: answer)
    }

    func pay(_ request: WeChatPayRequest) async -> WeChatPayResult {
        guard confirms else { return WeChatPayResult(errCode: -2, errStr: "用户取消") }
        let invocation: [String: String] = [
            "appid": request.appID, "partnerid": request.partnerID, "prepayid": request.prepayID, "package": request.package,
            "noncestr": request.nonceStr, "timestamp": String(request.timeStamp), "sign": request.sign,
        ]
        guard let body = try? JSONSerialization.data(withJSONObject: invocation),
            let answer = try? await SandboxCalls(server: server).post("sandbox/wechatpay/pay", body: body),
            let code = (answer["errCode"] as? String).flatMap(Int32.init)
        else { return WeChatPayResult(errCode: -1, errStr: "network") }
        if killedAfterPayment { kill(getpid(), SIGKILL) }
        return WeChatPayResult(errCode: code, errStr: answer["errStr"] as? String)
    }
}
