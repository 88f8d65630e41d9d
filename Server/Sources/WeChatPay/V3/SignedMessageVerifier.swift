import ChannelSupport
import Foundation
import OrderSafeModel
import _CryptoExtras

/// Where the verifier finds WeChat Pay's keys: a fixed set (public-key mode, tests) or a
/// ``PlatformCertificateStore`` that downloads and refreshes platform certificates.
public protocol WeChatPayKeyProvider: Sendable {
    /// Keys that include `serial` when WeChat Pay has such a key (a store refreshes on an unknown serial).
    func verificationKeys(for serial: String) async throws(WeChatPayError) -> WeChatPayVerificationKeys
}

extension WeChatPayVerificationKeys: WeChatPayKeyProvider {
    public func verificationKeys(for serial: String) async throws(WeChatPayError) -> WeChatPayVerificationKeys { self }
}

/// Verifies WeChat Pay's signed responses and notifications on their raw bytes: `ts\nnonce\nbody\n` signed with
/// the key named by `Wechatpay-Serial`, with a timestamp no more than five minutes from now.
public struct SignedMessageVerifier: Sendable {
    public let keys: any WeChatPayKeyProvider
    let clock: any WallClock
    let maximumSkew: Int64

    public init(keys: any WeChatPayKeyProvider, clock: any WallClock, maximumSkewSeconds: Int64 = 300) {
        self.keys = keys
        self.clock = clock
        maximumSkew = maximumSkewSeconds
    }

    /// `headers` are looked up case-insensitively; `body` is exactly the bytes received.
    public func verify(headers: [String: String], body: [UInt8]) async throws(WeChatPayError) {
        let signed = try SignatureHeaders(headers)
        let now = Int64(clock.now().timeIntervalSince1970)
        guard TimestampWindow.contains(signed.timestamp, now: now, seconds: maximumSkew) else {
            throw .staleTimestamp(seconds: signed.timestamp, now: now)
        }
        try signed.verify(
            body: body, with: try await keys.verificationKeys(for: signed.serial).key(serial: signed.serial))
    }
}

/// The `Wechatpay-*` headers of a signed message.
struct SignatureHeaders {
    var timestampText: String
    var timestamp: Int64
    var nonce: String
    var signature: String
    var serial: String

    init(_ headers: [String: String]) throws(WeChatPayError) {
        func header(_ name: String) -> String? {
            headers[name] ?? headers.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame })?.value
        }
        func required(_ name: String) throws(WeChatPayError) -> String {
            guard let value = header(name), !value.isEmpty else { throw .missingHeader(name) }
            return value
        }
        timestampText = try required("Wechatpay-Timestamp")
        nonce = try required("Wechatpay-Nonce")
        signature = try required("Wechatpay-Signature")
        serial = try required("Wechatpay-Serial")
        if let type = header("Wechatpay-Signature-Type"), type != "WECHATPAY2-SHA256-RSA2048" {
            throw .unsupportedAlgorithm(type)
        }
        guard let timestamp = Int64(timestampText) else {
            throw .malformedNotification("Wechatpay-Timestamp is not a number")
        }
        self.timestamp = timestamp
    }

    func verify(body: [UInt8], with key: _RSA.Signing.PublicKey) throws(WeChatPayError) {
        var message = Array("\(timestampText)\n\(nonce)\n".utf8)
        message.reserveCapacity(message.count + body.count + 1)
        message.append(contentsOf: body)
        message.append(UInt8(ascii: "\n"))
        guard SHA256WithRSA.verify(signature, over: message, with: key) else { throw .badSignature }
    }
}
