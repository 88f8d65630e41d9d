import Foundation
import OrderSafeModel

/// WeChat Pay through the app's ``WeChatPayBridge``: a `PayReq` from the server's signed parameters; the answer kept
/// is `PayResp.errCode`.
struct WeChatPayPayment: ProviderPayment {
    static let channel = Channel.wechatPay
    let bridge: any WeChatPayBridge
    var paymentApp: any PaymentAppBridge { bridge }

    init?(_ configuration: OrderSafeConfiguration) {
        guard let bridge = configuration.wechatPay else { return nil }
        self.bridge = bridge
    }

    func pay(_ response: OrderResponse, within limit: TimeInterval) async -> (
        result: String, hint: ClientResultRequest
    )? {
        guard let invocation = response.wechatpay, let request = WeChatPayRequest(invocation) else { return nil }
        let result = await BoundedAnswer.within(limit) { [bridge] in await bridge.pay(request) } ?? .noAnswer
        return (String(result.errCode), ClientResultRequest(result: result.hint, detail: "errCode=\(result.errCode)"))
    }

    static func hint(result: String) -> ClientResultRequest.Result {
        Int32(result).map { WeChatPayResult(errCode: $0).hint } ?? .pending
    }

    /// An unreadable code counts as −1 (WeChat's general error).
    static func failure(result: String) -> OrderSafeError {
        .wechatPay(WeChatPayResult(errCode: Int32(result) ?? -1))
    }
}
