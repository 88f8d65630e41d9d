import ChannelSupport
import Crypto
import Foundation
import Sandbox
import _CryptoExtras

/// The sandboxes' request handling (what anyone can send a server in sandbox mode): method, target, headers, body.
enum SandboxFuzz {
    static let merchantKey = P256.Signing.PrivateKey()
    static let appStore = try! SandboxAppStore(
        authority: JWSFuzz.authority, receipts: ReceiptFuzz.signer, bundleID: "com.example.app", appAppleID: 1234,
        merchantKeyID: "KEY1",
        merchantKey: merchantKey.publicKey, sharedSecret: "shared-secret", clock: PinnedClock())
    static let wechatpay = try! SandboxWeChatPay(
        merchantID: "1900000001", appID: "wx0000000000000001", merchantSerial: "AB",
        merchantPublicKey: WeChatPayFuzz.platformKey.publicKey,
        apiV3Key: "0123456789abcdef0123456789abcdef", platformKey: WeChatPayFuzz.platformKey, clock: PinnedClock())

    static func run(_ bytes: [UInt8]) async {
        let message = FuzzMessage(bytes)
        let parts = message.firstLine.split(separator: " ", maxSplits: 1).map(String.init)
        let method = parts.first ?? "GET"
        let target = parts.count > 1 ? parts[1] : "/"
        _ = await appStore.handle(method: method, pathAndQuery: target, headers: message.headers, body: message.body)
        _ = await wechatpay.handle(method: method, pathAndQuery: target, headers: message.headers, body: message.body)
    }
}
