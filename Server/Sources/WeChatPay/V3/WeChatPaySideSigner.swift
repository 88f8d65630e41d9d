import ChannelSupport
import Foundation
import _CryptoExtras

/// WeChat Pay's side of the protocol, for simulators and tests: signs responses and notifications with the
/// platform private key and encrypts resources with the merchant's APIv3 key.
public struct WeChatPaySideSigner: Sendable {
    let platformKey: _RSA.Signing.PrivateKey
    public let serial: String

    public init(platformKey: _RSA.Signing.PrivateKey, serial: String) {
        self.platformKey = platformKey
        self.serial = serial
    }

    /// The `Wechatpay-*` headers for `body` sent at `timestamp` with `nonce`.
    public func headers(body: String, timestamp: Int64, nonce: String) throws -> [String: String] {
        [
            "Wechatpay-Timestamp": String(timestamp), "Wechatpay-Nonce": nonce, "Wechatpay-Serial": serial,
            "Wechatpay-Signature-Type": "WECHATPAY2-SHA256-RSA2048",
            "Wechatpay-Signature": try SHA256WithRSA.sign("\(timestamp)\n\(nonce)\n\(body)\n", with: platformKey),
        ]
    }

    /// A notification body whose `resource` is `plaintext` encrypted with `cipher`.
    public func notificationBody(
        id: String, eventType: String, createTime: String, plaintext: String, cipher: APIv3Cipher, nonce: String
    ) throws -> String {
        let resource: [String: String] = [
            "algorithm": "AEAD_AES_256_GCM", "original_type": "transaction", "associated_data": "transaction",
            "nonce": nonce,
            "ciphertext": try cipher.encrypt(Array(plaintext.utf8), nonce: nonce, associatedData: "transaction"),
        ]
        let envelope: [String: Any] = [
            "id": id, "create_time": createTime, "resource_type": "encrypt-resource", "event_type": eventType,
            "summary": "支付成功", "resource": resource,
        ]
        return String(
            decoding: try JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys]), as: UTF8.self)
    }
}
