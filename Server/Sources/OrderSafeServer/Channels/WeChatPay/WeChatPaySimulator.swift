import ChannelSupport
import Foundation
import Hummingbird
import OrderSafeModel
import Sandbox

/// The built-in WeChat Pay (API v3, public-key or platform-certificate mode as `server.sandbox_wechatpay_signing`
/// says): prepay, query, close, refund, bills and notifications in WeChat Pay's wire format under
/// `/sandbox/wechatpay`, called in process (no network hop to ourselves). A merchant's own SDK finds what it needs in
/// the sandbox folder: the merchant key (`wechatpay-merchant-private-key.pem`, PKCS#8 as WeChat Pay's
/// `apiclient_key.pem`), WeChat Pay's public key (`wechatpay-public-key.pem`), its first platform certificate
/// (`wechatpay-platform-certificate.pem`, as WeChat Pay's certificate download tool saves it before an SDK in
/// certificate mode first runs) and `wechatpay-merchant.json` (the
/// merchant and app ids, the merchant serial, the public key id, the gateway and the APIv3 key's file).
struct WeChatPaySimulator: ChannelSimulator {
    static let merchantID = "1900000001"
    static let appID = "wx0000000000sandbox"
    static let merchantSerial = "5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D"
    static let publicKeyID = "PUB_KEY_ID_0119000000012026000000000000"

    let wechatpay: SandboxWeChatPay
    let account: Settings.WeChatPay

    init(_ setup: SimulatorSetup) throws {
        let merchantKey = try setup.rsaKey("wechatpay-merchant-private-key.pem", pkcs8: true)
        let platformKey = try setup.rsaKey("wechatpay-simulator-private-key.pem", pkcs8: true)
        let apiV3Key = try setup.secret("wechatpay-apiv3-key")
        let signing = setup.simulatorSettings[WeChatPayChannel.channel] as? SandboxWeChatPaySigning ?? .publicKey
        let publicKeyMode = signing == .publicKey
        wechatpay = try SandboxWeChatPay(
            merchantID: Self.merchantID, appID: Self.appID, merchantSerial: Self.merchantSerial,
            merchantPublicKey: merchantKey.publicKey, apiV3Key: apiV3Key, platformKey: platformKey,
            mode: publicKeyMode ? .publicKey(id: Self.publicKeyID) : .platformCertificate,
            timeScale: setup.timeScale, clock: setup.clock, folder: setup.journalFolder, downloadBase: setup.base,
            logger: setup.logger)
        account = Settings.WeChatPay(
            merchantID: Self.merchantID, appID: Self.appID, merchantPrivateKey: merchantKey.pemRepresentation,
            merchantSerial: Self.merchantSerial, apiV3Key: apiV3Key,
            publicKey: publicKeyMode ? (Self.publicKeyID, wechatpay.publicKeyPEM) : nil,
            notifyURL: setup.base + "/v1/notify/wechatpay", baseURL: setup.base + "/sandbox/wechatpay")
        try setup.publish(wechatpay.publicKeyPEM, as: "wechatpay-public-key.pem")
        try setup.publish(wechatpay.firstCertificate.pem, as: "wechatpay-platform-certificate.pem")
        try setup.publish(
            Self.merchantFile(gateway: account.baseURL, notifyURL: account.notifyURL, signing: signing),
            as: "wechatpay-merchant.json")
    }

    /// `wechatpay-merchant.json`: what a merchant's SDK is configured with, beside the key files.
    static func merchantFile(gateway: String, notifyURL: String, signing: SandboxWeChatPaySigning) -> String {
        let members: [(String, String)] = [
            ("mchid", merchantID), ("appid", appID), ("merchant_serial", merchantSerial),
            ("merchant_private_key_file", "wechatpay-merchant-private-key.pem"),
            ("apiv3_key_file", "wechatpay-apiv3-key"), ("signing", signing.rawValue),
            ("public_key_id", publicKeyID), ("public_key_file", "wechatpay-public-key.pem"),
            ("platform_certificate_file", "wechatpay-platform-certificate.pem"),
            ("gateway", gateway), ("notify_url", notifyURL),
        ]
        return JSONString.object(members)
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
