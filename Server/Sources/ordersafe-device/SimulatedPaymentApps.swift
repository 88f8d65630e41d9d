import Foundation
import OrderSafeKit

#if canImport(Glibc)
import Glibc
#endif

/// The Alipay and WeChat apps of the simulated device: they pay through the sandboxes' `pay` routes (what the
/// real apps do when the user confirms) and answer as the vendor SDKs do — through the same ``PaymentResultRelay``
/// an app uses, so that an answer that never comes, comes late or comes twice takes the app's real path.
struct SimulatedPaymentApps: AlipayBridge, WeChatPayBridge {
    /// How the payment app hands its answer back.
    enum Callback: String, CaseIterable, Sendable {
        /// At once, as the SDK's callback.
        case normal
        /// Never: the user comes back by the app switcher or the status bar's back link.
        case none
        /// After the app became active and stopped waiting (then dropped).
        case late
        /// Twice (the second dropped).
        case twice
    }

    let server: URL
    /// False: the user backs out of the payment app.
    let confirms: Bool
    var callback = Callback.normal
    /// The app gets SIGKILL right after the payment app took the money (for demonstrations).
    var killedAfterPayment = false
    let alipay = PaymentResultRelay<AlipayResult>()
    let wechat = PaymentResultRelay<WeChatPayResult>()
    /// How long the app waits for an answer once it is active again.
    static let grace: TimeInterval = 0.3

    func pay(orderString: String) async -> AlipayResult {
        await alipay.wait(superseded: AlipayResult(resultStatus: "6001")) { [self] in
            Task { await hand(await alipayAnswer(orderString), to: alipay) }
        }
    }

    func pay(_ request: WeChatPayRequest) async -> WeChatPayResult {
        await wechat.wait(superseded: WeChatPayResult(errCode: -2)) { [self] in
            Task { await hand(await wechatAnswer(request), to: wechat) }
        }
    }

    /// The payment app's answer reaches the app as `callback` says; the app says it is active again.
    private func hand<R: Sendable>(_ answer: R, to relay: PaymentResultRelay<R>) async {
        switch callback {
        case .normal:
            await relay.deliver(answer)
        case .twice:
            await relay.deliver(answer)
            await relay.deliver(answer)
        case .none:
            await relay.appBecameActive(grace: Self.grace)
        case .late:
            await relay.appBecameActive(grace: Self.grace)
            try? await Task.sleep(for: .milliseconds(Int(Self.grace * 3000)))
            await relay.deliver(answer)
        }
    }

    private func alipayAnswer(_ orderString: String) async -> AlipayResult {
        guard confirms else { return AlipayResult(resultStatus: "6001", memo: "用户中途取消") }
        guard
            let answer = try? await SandboxCalls(server: server).post(
                "sandbox/alipay/pay", body: Data(orderString.utf8))
        else {
            return AlipayResult(resultStatus: "6002", memo: "网络连接出错")
        }
        if killedAfterPayment { kill(getpid(), SIGKILL) }
        return AlipayResult(dictionary: answer)
    }

    private func wechatAnswer(_ request: WeChatPayRequest) async -> WeChatPayResult {
        guard confirms else { return WeChatPayResult(errCode: -2, errStr: "用户取消") }
        let invocation: [String: String] = [
            "appid": request.appID, "partnerid": request.partnerID, "prepayid": request.prepayID,
            "package": request.package,
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
