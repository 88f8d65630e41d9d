import Alipay
import ChannelSupport
import Crypto
import Foundation
import Hummingbird
import Logging
import OrderSafeModel
import Sandbox
import WeChatPay
import _CryptoExtras

/// The built-in provider simulators `serve` runs in the sandbox when no real account is configured, with their
/// keys generated on first start and kept in the data folder.
public struct SandboxProviders: Sendable {
    static let alipayAppID = "2021000000000000"
    static let wechatpayMerchantID = "1900000001"
    static let wechatpayAppID = "wx0000000000sandbox"
    static let wechatpayMerchantSerial = "5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D5A0D"
    static let wechatpayPublicKeyID = "PUB_KEY_ID_0119000000012026000000000000"

    let alipay: SandboxAlipay
    let alipaySettings: Settings.Alipay
    let wechatpay: SandboxWeChatPay
    let wechatpaySettings: Settings.WeChatPay
    /// The built-in App Store; its roots are written to `data/sandbox/appstore-root.der` (signed data) and
    /// `appstore-receipt-root.der` (receipts) for `ordersafe appstore verify|receipt --root`.
    let appStore: SandboxAppStore
    /// The App Store's per-device transaction queues (what StoreKitStandIn and `ordersafe-device` talk to).
    let devices: SandboxAppStoreDevices
    let appStoreSettings: Settings.AppStore
    static let appStoreBundleID = "com.example.ordersafe"
    static let appStoreKeyID = "SANDBOXKEY1"
    static let appStoreAppAppleID: Int64 = 1_234_567_890

    /// Signs transactions with the App Store sandbox's authority kept in `settings`' data folder (created if missing),
    /// for a server running on that folder to verify; see ``SandboxTransactionMinter``.
    public static func appStoreMinter(settings: Settings.Server, now: Date = Date()) throws -> SandboxTransactionMinter
    {
        let folder = URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return SandboxTransactionMinter(
            authority: try SandboxAppStoreCA.loadOrCreate(in: folder, now: now), bundleID: appStoreBundleID)
    }

    /// - Parameter timeScale: multiplies the providers' notification retry schedules (1/60 by default: Alipay's
    ///   first retry after 4 seconds instead of 4 minutes).
    init(settings: Settings.Server, clock: any WallClock = SystemClock(), timeScale: Double = 1.0 / 60, logger: Logger)
        throws
    {
        let folder = URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let appKey = try Self.key(folder.appendingPathComponent("alipay-app-private-key.pem"))
        let alipayKey = try Self.key(folder.appendingPathComponent("alipay-simulator-private-key.pem"))
        alipay = try SandboxAlipay(
            appID: Self.alipayAppID, alipayKey: alipayKey, appPublicKey: appKey.publicKey, timeScale: timeScale,
            clock: clock,
            folder: folder, logger: logger)
        let base = "http://\(settings.host == "0.0.0.0" ? "127.0.0.1" : settings.host):\(settings.port)"
        alipaySettings = Settings.Alipay(
            appID: Self.alipayAppID, appPrivateKey: appKey.pemRepresentation,
            publicKey: alipayKey.publicKey.pemRepresentation,
            certificates: nil, sellerID: alipay.sellerID, gatewayURL: base + "/sandbox/alipay/gateway.do",
            notifyURL: base + "/v1/notify/alipay")

        let merchantKey = try Self.key(folder.appendingPathComponent("wechatpay-merchant-private-key.pem"))
        let platformKey = try Self.key(folder.appendingPathComponent("wechatpay-simulator-private-key.pem"))
        let apiV3Key = try Self.secret(folder.appendingPathComponent("wechatpay-apiv3-key"))
        wechatpay = try SandboxWeChatPay(
            merchantID: Self.wechatpayMerchantID, appID: Self.wechatpayAppID,
            merchantSerial: Self.wechatpayMerchantSerial,
            merchantPublicKey: merchantKey.publicKey, apiV3Key: apiV3Key, platformKey: platformKey,
            mode: .publicKey(id: Self.wechatpayPublicKeyID), timeScale: timeScale, clock: clock,
            folder: folder, logger: logger)
        wechatpaySettings = Settings.WeChatPay(
            merchantID: Self.wechatpayMerchantID, appID: Self.wechatpayAppID,
            merchantPrivateKey: merchantKey.pemRepresentation,
            merchantSerial: Self.wechatpayMerchantSerial, apiV3Key: apiV3Key,
            publicKey: (Self.wechatpayPublicKeyID, wechatpay.publicKeyPEM), notifyURL: base + "/v1/notify/wechatpay",
            baseURL: base + "/sandbox/wechatpay")

        let authority = try SandboxAppStoreCA.loadOrCreate(in: folder, now: clock.now())
        let receipts = try SandboxReceiptSigner.loadOrCreate(in: folder, now: clock.now())
        let rootFile = folder.appendingPathComponent("appstore-root.der")
        let receiptRootFile = folder.appendingPathComponent("appstore-receipt-root.der")
        try Data(authority.rootDER).write(to: rootFile, options: .atomic)
        try Data(receipts.rootDER).write(to: receiptRootFile, options: .atomic)
        let apiKey = try Self.appStoreKey(folder.appendingPathComponent("appstore-api-key.pem"))
        var appStoreSettings = Settings.AppStore(
            bundleID: Self.appStoreBundleID, appAppleID: Self.appStoreAppAppleID, environment: .sandbox,
            rootCertificateFiles: [rootFile.path], receiptRootCertificateFiles: [receiptRootFile.path],
            api: .init(
                signingKey: apiKey.pemRepresentation, keyID: Self.appStoreKeyID, issuerID: "sandbox-issuer",
                baseURL: "http://sandbox.ordersafe.invalid/sandbox/appstore"))
        appStoreSettings.answersConsumptionRequests = true  // the sandbox's users consent
        self.appStoreSettings = appStoreSettings
        appStore = try SandboxAppStore(
            authority: authority, receipts: receipts, bundleID: Self.appStoreBundleID,
            appAppleID: Self.appStoreAppAppleID,
            merchantKeyID: Self.appStoreKeyID, merchantKey: apiKey.publicKey, clock: clock, folder: folder)
        devices = try SandboxAppStoreDevices(store: appStore, folder: folder)
    }

    /// Picks up where the simulators were when a server last stopped on this data folder, as the real providers
    /// would have: each device's StoreKit queue rebuilt, and every notification nobody acknowledged sent again (the
    /// server answers them once it listens; the providers' retry schedules cover the wait). Idempotent.
    func resume() async {
        await devices.restore()
        await alipay.resumeNotifications()
        await wechatpay.resumeNotifications()
    }

    /// The App Store Server API key the merchant would download from App Store Connect, kept in the data folder.
    static func appStoreKey(_ url: URL) throws -> P256.Signing.PrivateKey {
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return try P256.Signing.PrivateKey(pemRepresentation: text)
        }
        let key = P256.Signing.PrivateKey()
        try write(key.pemRepresentation, to: url)
        return key
    }

    /// The built-in WeChat Pay is called in process (no network hop to ourselves).
    var wechatpayTransport: any ProviderTransport { wechatpay.transport }

    /// The simulators' routes under `/sandbox`; with `tokens`, `POST /sandbox/token` (`{"user": …}`) mints a user
    /// token the way a merchant's backend would, for `ordersafe-device` and other test clients.
    func addRoutes(
        to router: Router<OrderSafeRequestContext>, catalog: Catalog, tokens: DevelopmentTokenIssuer?,
        clock: any WallClock
    ) async {
        SandboxAlipayRoutes<OrderSafeRequestContext>(alipay: alipay).addRoutes(to: router.group("sandbox/alipay"))
        SandboxWeChatPayRoutes<OrderSafeRequestContext>(wechatpay: wechatpay).addRoutes(
            to: router.group("sandbox/wechatpay"))
        SandboxAppStoreRoutes<OrderSafeRequestContext>(store: appStore).addRoutes(to: router.group("sandbox/appstore"))
        await devices.setProducts(Self.deviceProducts(catalog))
        SandboxAppStoreDeviceRoutes<OrderSafeRequestContext>(devices: devices).addRoutes(
            to: router.group("sandbox/appstore"))
        if let tokens {
            router.post("sandbox/token") { request, context in
                let body = try await request.decodeJSON(SandboxTokenRequest.self, limit: 4096, context: context)
                guard !body.user.isEmpty, body.user.count <= 128 else {
                    throw APIError(
                        status: .badRequest, code: "invalid_request", message: "user must be 1 to 128 characters")
                }
                return try Response.json([
                    "token": try await tokens.token(userID: body.user, now: clock.now(), lifetime: 3600)
                ])
            }
        }
    }

    /// The catalog's App Store products as the sandbox device's StoreKit sells them.
    static func deviceProducts(_ catalog: Catalog) -> [SandboxAppStoreDevices.DeviceProduct] {
        catalog.products.compactMap { product in
            guard let id = product.appStoreProductID, let price = product.price(for: .appStore) else { return nil }
            let type =
                switch product.kind {
                case .consumable: "Consumable"
                case .nonConsumable: "Non-Consumable"
                case .autoRenewableSubscription: "Auto-Renewable Subscription"
                case .nonRenewingSubscription: "Non-Renewing Subscription"
                }
            return .init(id: id, type: type, displayName: product.title, price: price)
        }
    }

    /// A 32-character secret kept at `url` (mode 0600), generated when missing.
    private static func secret(_ url: URL) throws -> String {
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let secret = String((0..<32).map { _ in alphabet.randomElement()! })
        try write(secret, to: url)
        return secret
    }

    private static func write(_ text: String, to url: URL) throws {
        guard
            FileManager.default.createFile(
                atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw SettingsError(key: "server.data_dir", reason: "cannot write \(url.path)")
        }
    }

    /// The RSA key kept at `url` (mode 0600), generated when missing.
    private static func key(_ url: URL) throws -> _RSA.Signing.PrivateKey {
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return try _RSA.Signing.PrivateKey(pemRepresentation: text)
        }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try write(key.pemRepresentation, to: url)
        return key
    }
}

/// Body of `POST /sandbox/token`.
struct SandboxTokenRequest: APIRequestBody {
    static let members: Set<String> = ["user"]
    var user: String
}
