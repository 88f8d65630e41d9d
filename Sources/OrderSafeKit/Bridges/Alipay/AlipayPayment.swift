import Foundation
import OrderSafeModel

/// Alipay through the app's ``AlipayBridge``: `payOrder` with the server's signed order string; the answer kept is
/// its `resultStatus`.
struct AlipayPayment: ProviderPayment {
    static let channel = Channel.alipay
    let bridge: any AlipayBridge
    var paymentApp: any PaymentAppBridge { bridge }

    init?(_ configuration: OrderSafeConfiguration) {
        guard let bridge = configuration.alipay else { return nil }
        self.bridge = bridge
    }

    func pay(_ response: OrderResponse, within limit: TimeInterval) async -> (
        result: String, hint: ClientResultRequest
    )? {
        guard let invocation = response.alipay else { return nil }
        let result =
            await BoundedAnswer.within(limit) { [bridge] in await bridge.pay(orderString: invocation.orderString) }
            ?? .noAnswer
        return (
            result.resultStatus,
            ClientResultRequest(result: result.hint, detail: "resultStatus=\(result.resultStatus.prefix(16))")
        )
    }

    static func hint(result: String) -> ClientResultRequest.Result { AlipayResult(resultStatus: result).hint }

    static func failure(result: String) -> OrderSafeError { .alipay(AlipayResult(resultStatus: result)) }
}
