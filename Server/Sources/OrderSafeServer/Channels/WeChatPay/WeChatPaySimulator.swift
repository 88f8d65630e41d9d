import ChannelSupport
import Foundation
import Hummingbird
import OrderSafeModel
import Sandbox

/// The built-in WeChat Pay (API v3, public-key mode): prepay, query, close, refund and notifications in WeChat
/// Pay's wire format under `/sandbox/wechatpay`, called in process (no network hop to ourselves).
struct WeChatPaySimulator: ChannelSimulator {
    static let merchantID = "1900000001"
    static let appID = "wx0000000000sandbox"
    static let merchantSerial = "5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D"
    static let publicKeyID = "PUB_KEY_ID_0119000000012026000000000000"

    let wechatpay: SandboxWeChatPay
    let account: Settings.WeChatPay

    init(_ setup: SimulatorSetup) throws {
        let merchantKey = try setup.rsaKey("wechatpay-merchant-private-key.pem")
        let platformKey = try setup.rsaKey("wechatpay-simulator-private-key.pem")
        let apiV3Key = try setup.secret("wechatpay-apiv3-key")
        wechatpay = try SandboxWeChatPay(
            merchantID: Self.merchantID, appID: Self.appID, merchantSerial: Self.merchantSerial,
            merchantPublicKey: merchantKey.publicKey, apiV3Key: apiV3Key, platformKey: platformKey,
            mode: .publicKey(id: Self.publicKeyID), timeScale: setup.timeScale, clock: setup.clock,
            folder: setup.folder, downloadBase: setup.base, logger: setup.logger)
        account = Settings.WeChatPay(
            merchantID: Self.merchantID, appID: Self.appID, merchantPrivateKey: merchantKey.pemRepresentation,
            merchantSerial: Self.merchantSerial, apiV3Key: apiV3Key,
            publicKey: (Self.publicKeyID, wechatpay.publicKeyPEM), notifyURL: setup.base + "/v1/notify/wechatpay",
            baseURL: setup.base + "/sandbox/wechatpay")
    }

    var transport: any ProviderTransport { wechatpay.transport }

    func resume() async { await wechatpay.resumeNotifications() }

    func addRoutes(to router: Router<OrderSafeRequestContext>, catalog: Catalog) async {
        SandboxWeChatPayRoutes<OrderSafeRequestContext>(wechatpay: wechatpay).addRoutes(
            to: router.group("sandbox/wechatpay"))
    }
}

extension SandboxProviders {
    /// The built-in WeChat Pay.
    var wechatpay: SandboxWeChatPay { simulator(WeChatPaySimulator.self).wechatpay }
}
