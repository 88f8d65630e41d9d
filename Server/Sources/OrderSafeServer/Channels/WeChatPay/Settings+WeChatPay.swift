import ChannelSupport
import Engine
import Foundation
import Ledger
import Logging
import OrderSafeModel
import WeChatPay
import _CryptoExtras

extension Settings.WeChatPay {
    /// The channel these settings describe, with a configuration error naming the key on any mistake.
    /// `sandbox`: the account is the built-in simulator.
    func payments(transport: any ProviderTransport, context: EngineContext<any WeChatPayLedger>, sandbox: Bool) throws
        -> WeChatPayPayments
    {
        let (clock, logger) = (context.clock, context.logger)
        let merchant: MerchantSigner
        let cipher: APIv3Cipher
        do {
            merchant = try MerchantSigner(
                merchantID: merchantID, certificateSerial: merchantSerial, privateKey: merchantPrivateKey)
        } catch {
            throw SettingsError(key: "wechatpay.merchant_private_key", reason: error.description)
        }
        do {
            cipher = try APIv3Cipher(apiV3Key: apiV3Key)
        } catch {
            throw SettingsError(key: "wechatpay.apiv3_key", reason: error.description)
        }
        let keys: any WeChatPayKeyProvider
        if let publicKey {
            var fixed = WeChatPayVerificationKeys()
            do {
                try fixed.addPublicKey(id: publicKey.id, pem: publicKey.pem)
            } catch {
                throw SettingsError(key: "wechatpay.public_key", reason: error.description)
            }
            if (try? _RSA.Signing.PublicKey(pemRepresentation: publicKey.pem))?.derRepresentation
                == merchant.publicKeyDER
            {
                throw SettingsError(
                    key: "wechatpay.public_key",
                    reason:
                        "this is the merchant API key's public half; configure WeChat Pay's public key (PUB_KEY_ID_…) instead"
                )
            }
            keys = fixed
        } else {
            keys = PlatformCertificateStore(
                merchant: merchant, cipher: cipher, baseURL: baseURL, transport: transport, clock: clock, logger: logger
            )
        }
        let client = WeChatPayClient(
            merchant: merchant, appID: appID, keys: keys, baseURL: baseURL, transport: transport, clock: clock,
            logger: logger)
        return WeChatPayPayments(
            client: client,
            notifications: WeChatPayNotificationParser(
                verifier: SignedMessageVerifier(keys: keys, clock: clock), cipher: cipher),
            notifyURL: notifyURL, context: context, sandbox: sandbox)
    }
}

extension Settings {
    /// The WeChatPay section (`Settings.channels[.wechatPay]`).
    public var wechatpay: WeChatPay? {
        get { channels[.wechatPay] as? WeChatPay }
        set { channels[.wechatPay] = newValue }
    }

    /// The merchant's WeChat Pay (API v3) account. Nil: in the sandbox the built-in simulator stands in; in
    /// production the channel is off (and a catalog selling through it stops the start).
    public struct WeChatPay: ChannelSettings {
        public var merchantID: String
        public var appID: String
        /// The merchant API private key, PEM (PKCS#1 or PKCS#8).
        public var merchantPrivateKey: String
        /// The merchant API certificate's serial number.
        public var merchantSerial: String
        /// The 32-byte APIv3 key.
        public var apiV3Key: String
        /// Public-key mode: WeChat Pay's public key and its `PUB_KEY_ID_…`. Nil: platform-certificate mode
        /// (downloaded from `/v3/certificates` and refreshed).
        public var publicKey: (id: String, pem: String)?
        /// The public URL of `POST /v1/notify/wechatpay`.
        public var notifyURL: String
        public var baseURL: String
    }
}

extension SettingsReader {
    /// The WeChat Pay section: nil when `wechatpay.mch_id` is not set.
    func wechatpay() throws -> Settings.WeChatPay? {
        guard let merchantID = try string("wechatpay.mch_id") else { return nil }
        func required(_ key: String, secret isSecret: Bool = false) throws -> String {
            guard let value = isSecret ? try secret(key) : try string(key) else {
                throw SettingsError(key: key, reason: "is required when wechatpay.mch_id is set")
            }
            return value
        }
        let publicKeyID = try string("wechatpay.public_key_id")
        let publicKey = try secret("wechatpay.public_key")
        guard (publicKeyID == nil) == (publicKey == nil) else {
            throw SettingsError(
                key: "wechatpay.public_key",
                reason: "public-key mode needs both wechatpay.public_key_id and wechatpay.public_key")
        }
        guard let notifyURL = try url("wechatpay.notify_url") else {
            throw SettingsError(
                key: "wechatpay.notify_url", reason: "is required: the public URL of POST /v1/notify/wechatpay")
        }
        return Settings.WeChatPay(
            merchantID: merchantID, appID: try required("wechatpay.app_id"),
            merchantPrivateKey: try required("wechatpay.merchant_private_key", secret: true),
            merchantSerial: try required("wechatpay.merchant_serial"),
            apiV3Key: try required("wechatpay.apiv3_key", secret: true),
            publicKey: publicKeyID.map { ($0, publicKey!) }, notifyURL: notifyURL,
            baseURL: try url("wechatpay.base_url") ?? "https://api.mch.weixin.qq.com")
    }
}
