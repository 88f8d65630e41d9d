/// Why a WeChat Pay key, signature, notification or ciphertext was refused.
public enum WeChatPayError: Error, Equatable, CustomStringConvertible {
    case unreadableKey(String)
    case unreadableCertificate(String)
    /// An APIv3 key must be exactly 32 bytes.
    case invalidAPIv3KeyLength(Int)
    case missingHeader(String)
    /// `Wechatpay-Serial` names no certificate or public key we hold.
    case unknownSerial(String)
    case badSignature
    /// `Wechatpay-Timestamp` is more than the allowed skew from now (a replay, or a clock problem).
    case staleTimestamp(seconds: Int64, now: Int64)
    case unsupportedAlgorithm(String)
    /// AES-GCM refused the ciphertext: wrong APIv3 key, altered data, or a truncated ciphertext.
    case decryptionFailed
    case malformedNotification(String)

    public var description: String {
        switch self {
        case .unreadableKey(let what): "\(what) is not a PEM RSA key (PKCS#1 or PKCS#8) of at least 2048 bits"
        case .unreadableCertificate(let detail): "certificate unusable: \(detail)"
        case .invalidAPIv3KeyLength(let length): "the APIv3 key must be 32 bytes, not \(length)"
        case .missingHeader(let name): "the \(name) header is missing"
        case .unknownSerial(let serial): "no WeChat Pay certificate or public key with serial '\(serial)'"
        case .badSignature: "the WeChat Pay signature does not verify"
        case .staleTimestamp(let seconds, let now):
            "Wechatpay-Timestamp \(seconds) is more than 5 minutes from now (\(now))"
        case .unsupportedAlgorithm(let algorithm): "resource algorithm '\(algorithm)' is not AEAD_AES_256_GCM"
        case .decryptionFailed: "decryption failed: check the APIv3 key (or the resource was altered)"
        case .malformedNotification(let detail): "malformed notification: \(detail)"
        }
    }
}
