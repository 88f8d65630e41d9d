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
    func payments(transport: any ProviderTransport, context: EngineContext, sandbox: Bool) throws -> WeChatPayPayments {
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
