import Alipay
import ChannelSupport
import _CryptoExtras

/// Alipay's form bodies and asynchronous notifications (parsed, then signature-checked on their raw bytes), and its
/// trade bills (a zip of GBK CSV files, and the files' text alone), with the gzip inflater beside the zip reader.
enum AlipayFuzz {
    static let appKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let alipayKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let verifier = AlipayNotificationVerifier(
        credentials: try! AlipayCredentials(
            appID: "2021000000000001", appPrivateKey: appKey.pemRepresentation,
            alipayPublicKey: alipayKey.publicKey.pemRepresentation))

    static func run(_ bytes: [UInt8]) {
        _ = try? FormEncoding.parse(bytes)
        if let fields = try? FormFields(parsing: bytes) { _ = fields.signContent(excluding: ["sign", "sign_type"]) }
        _ = try? verifier.verify(body: bytes)
        _ = try? RawJSONMembers.extract(bytes)
        _ = try? AlipayTradeBill(zip: bytes, maxBytes: 1 << 20)
        _ = try? AlipayTradeBill(detail: bytes, summary: bytes)
        _ = try? Zlib.inflate(bytes[...], wrapping: .gzip, maxBytes: 1 << 20)
    }
}
