import ChannelSupport
import Foundation
import Hummingbird
import OrderSafeModel
import Sandbox

/// The built-in Alipay: a gateway and notifier speaking Alipay's wire format under `/sandbox/alipay`, with the app
/// key pair and Alipay's own kept in the sandbox folder. A merchant's own SDK finds what it needs there: the app's
/// private key (`alipay-app-private-key.pem`, PKCS#1 as Alipay's key tool writes it for languages other than Java),
/// Alipay's public key (`alipay-public-key.pem`) and `alipay-app.json` (the app id, the seller id, the gateway and
/// the notify URL).
struct AlipaySimulator: ChannelSimulator {
    static let appID = "2021000000000000"

    let alipay: SandboxAlipay
    let account: Settings.Alipay

    init(_ setup: SimulatorSetup) throws {
        let appKey = try setup.rsaKey("alipay-app-private-key.pem")
        let alipayKey = try setup.rsaKey("alipay-simulator-private-key.pem")
        alipay = try SandboxAlipay(
            appID: Self.appID, alipayKey: alipayKey, appPublicKey: appKey.publicKey, timeScale: setup.timeScale,
            clock: setup.clock, folder: setup.journalFolder, downloadBase: setup.base + "/sandbox/alipay/",
            logger: setup.logger)
        account = Settings.Alipay(
            appID: Self.appID, appPrivateKey: appKey.pemRepresentation,
            publicKey: alipayKey.publicKey.pemRepresentation, certificates: nil, sellerID: alipay.sellerID,
            gatewayURL: setup.base + "/sandbox/alipay/gateway.do", notifyURL: setup.base + "/v1/notify/alipay")
        try setup.publish(alipayKey.publicKey.pemRepresentation, as: "alipay-public-key.pem")
        let members: [(String, String)] = [
            ("app_id", Self.appID), ("seller_id", alipay.sellerID),
            ("app_private_key_file", "alipay-app-private-key.pem"), ("alipay_public_key_file", "alipay-public-key.pem"),
            ("gateway", account.gatewayURL), ("notify_url", account.notifyURL),
        ]
        try setup.publish(JSONString.object(members), as: "alipay-app.json")
    }

    var transport: any ProviderTransport { alipay.transport }

    func resume() async { await alipay.resumeNotifications() }

    func addRoutes(to router: Router<OrderSafeRequestContext>, catalog: Catalog) async {
        SandboxAlipayRoutes<OrderSafeRequestContext>(alipay: alipay).addRoutes(to: router.group("sandbox/alipay"))
    }
}

extension SandboxProviders {
    /// The built-in Alipay.
    var alipay: SandboxAlipay { simulator(AlipaySimulator.self).alipay }
}
