import Foundation
import OrderSafeModel

/// A channel the app pays through by opening the provider's app with what the server's answer carries (Alipay,
/// WeChat Pay): the app's bridge to it, how its answer reads, and what its failure says. One per folder under
/// `Bridges/`; ``ProviderPayments`` lists them, and the purchase flows ask it rather than name a provider.
protocol ProviderPayment: Sendable {
    static var channel: Channel { get }
    /// The app's bridge, from `configuration`; nil when the app gave none.
    init?(_ configuration: OrderSafeConfiguration)
    /// Opens the provider's app with `response`'s invocation, waiting at most `limit` for its answer; nil when the
    /// response carries none. Returns the answer as the journal keeps it, and the hint the server is given.
    func pay(_ response: OrderResponse, within limit: TimeInterval) async -> (
        result: String, hint: ClientResultRequest
    )?
    /// The hint an answer kept in the journal gives.
    static func hint(result: String) -> ClientResultRequest.Result
    /// The error a failed answer kept in the journal is.
    static func failure(result: String) -> OrderSafeError
    /// The app's bridge, as the one told the app is active again.
    var paymentApp: any PaymentAppBridge { get }
}

/// Every provider the app can pay through besides the App Store.
enum ProviderPayments {
    static let all: [any ProviderPayment.Type] = [AlipayPayment.self, WeChatPayPayment.self]

    static func type(of channel: Channel) -> (any ProviderPayment.Type)? {
        all.first { $0.channel == channel }
    }

    /// Every bridge the app gave.
    static func bridges(_ configuration: OrderSafeConfiguration) -> [any PaymentAppBridge] {
        all.compactMap { $0.init(configuration)?.paymentApp }
    }

    /// The provider of `channel` with the app's bridge; nil when it is none or the app gave no bridge.
    static func payment(of channel: Channel, _ configuration: OrderSafeConfiguration) -> (any ProviderPayment)? {
        type(of: channel)?.init(configuration)
    }
}
