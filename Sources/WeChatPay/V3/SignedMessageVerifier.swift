import Foundation
import OrderSafeModel

/// Verifies WeChat Pay's signed responses and notifications on their raw bytes: `ts\nnonce\nbody\n` signed with
/// the key named by `Wechatpay-Serial`, with a timestamp no more than five minutes from now.
public struct SignedMessageVerifier: Sendable {
    public let keys: WeChatPayVerificationKeys
    let clock: any WallClock
    let maximumSkew: Int64

    public init(keys: WeChatPayVerificationKeys, clock: any WallClock, maximumSkewSeconds: Int64 = 300) {
        self.keys = keys
        self.clock = clock
        maximumSkew = maximumSkewSeconds
    }

    /// `headers` are looked up case-insensitively; `body` is exactly the bytes received.
    public func verify(headers: [String: String], body: [UInt8]) throws(WeChatPayError) {
        func header(_ name: String) throws(WeChatPayError) -> String {
            guard let value = headers.first(where: { $0.key.lowercased() == name.lowercased() })?.value, !value.isEmpty else {
                throw .missingHeader(name)
            }
            return value
        }
        let timestampText = try header("Wechatpay-Timestamp")
        let nonce = try header("Wechatpay-Nonce")
        let signature = try header("Wechatpay-Signature")
        let serial = try header("Wechatpay-Serial")
        if let type = headers.first(where: { $0.key.lowercased() == "wechatpay-signature-type" })?.value,
            type != "WECHATPAY2-SHA256-RSA2048"
        {
            throw .unsupportedAlgorithm(type)
        }
        guard let timestamp = Int64(timestampText) else { throw .malformedNotification("Wechatpay-Timestamp is not a number") }
        let now = Int64(clock.now().timeIntervalSince1970)
        guard abs(now - timestamp) <= maximumSkew else { throw .staleTimestamp(seconds: timestamp, now: now) }
        let key = try keys.key(serial: serial)
        var message = Array("\(timestampText)\n\(nonce)\n".utf8)
        message.append(contentsOf: body)
        message.append(UInt8(ascii: "\n"))
        guard SHA256WithRSA.verify(signature, over: message, with: key) else { throw .badSignature }
    }
}
