import ChannelSupport
import WeChatPay
import _CryptoExtras

/// WeChat Pay v3 signature headers and notification envelopes, v2 XML, and trade and fund-flow bills (also gzipped, read
/// as they inflate).
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
        // The same bytes as a gzipped download, read a row at a time as they inflate (a small bound on the output).
        let file = WeChatPayBillFile(bytes: bytes, gzip: true, maxBytes: 1 << 20)
        if let lines = try? file.lines(), var rows = try? WeChatPayTradeBill.Rows(lines) {
            while (try? rows.next()) != nil {}
        }
    }
}
