import ChannelSupport
import WeChatPay
import _CryptoExtras

/// WeChat Pay v3 signature headers and notification envelopes, v2 XML, and trade and fund-flow bills.
enum WeChatPayFuzz {
    static let platformKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let cipher = try! APIv3Cipher(apiV3Key: "0123456789abcdef0123456789abcdef")
    static let parser: WeChatPayNotificationParser = {
        var keys = WeChatPayVerificationKeys()
        try! keys.addPublicKey(
            id: "PUB_KEY_ID_0000000000000000000000000000", pem: platformKey.publicKey.pemRepresentation)
        return WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(keys: keys, clock: PinnedClock()), cipher: cipher)
    }()

    static func run(_ bytes: [UInt8]) async {
        let message = FuzzMessage(bytes)
        _ = try? await parser.parse(headers: message.headers, body: message.body)
        _ = try? WeChatPayNotificationParser.decrypt(body: message.body, cipher: cipher)
        _ = try? V2XML.parse(bytes)
        _ = try? WeChatPayTradeBill(bytes)
        _ = try? WeChatPayFundFlowBill(bytes)
    }
}
