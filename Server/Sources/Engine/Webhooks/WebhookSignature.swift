import Crypto
import Foundation

/// The `OrderSafe-Signature` header of a merchant webhook: `t=<unix seconds>,v1=<hex HMAC-SHA256>` over
/// `"<t>.<body>"` with the shared secret. Merchants verify it on the raw body and refuse old timestamps.
public enum WebhookSignature {
    public static let headerName = "OrderSafe-Signature"

    public static func header(secret: String, body: [UInt8], timestamp: Int64) -> String {
        "t=\(timestamp),v1=\(mac(secret: secret, body: body, timestamp: timestamp).code.map { String(format: "%02x", $0) }.joined())"
    }

    /// True when `header` signs `body` with `secret` and its timestamp is within `tolerance` seconds of `now`.
    public static func verify(header: String, body: [UInt8], secret: String, now: Date, tolerance: TimeInterval = 300)
        -> Bool
    {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { return false }
            if pair[0] == "t" { timestamp = Int64(pair[1]) } else if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { return false }
        let expected = mac(secret: secret, body: body, timestamp: timestamp)
        return signatures.contains { candidate in
            guard let bytes = unhex(candidate) else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: expected.input, using: expected.key)
        }
    }

    private static func mac(secret: String, body: [UInt8], timestamp: Int64) -> (
        code: [UInt8], input: [UInt8], key: SymmetricKey
    ) {
        let key = SymmetricKey(data: Array(secret.utf8))
        let input = Array("\(timestamp).".utf8) + body
        return (Array(HMAC<SHA256>.authenticationCode(for: input, using: key)), input, key)
    }

    private static func unhex(_ text: String) -> [UInt8]? {
        guard text.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
