import Crypto
import Foundation

/// Legacy API v2 signatures: non-empty parameters except `sign`, ASCII-sorted, `k=v` joined by `&`, then
/// `&key=API_KEY`; MD5 or HMAC-SHA256 (keyed with the API key), uppercase hex.
public enum V2Signature {
    public enum Algorithm: String, Sendable {
        case md5 = "MD5"
        case hmacSHA256 = "HMAC-SHA256"
    }

    public static func stringToSign(_ parameters: [String: String], apiKey: String) -> String {
        parameters.filter { !$0.value.isEmpty && $0.key != "sign" }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { "\($0.key)=\($0.value)" }
            .joined(separator: "&") + "&key=\(apiKey)"
    }

    public static func sign(_ parameters: [String: String], apiKey: String, algorithm: Algorithm) -> String {
        let message = Data(stringToSign(parameters, apiKey: apiKey).utf8)
        let digest: [UInt8] =
            switch algorithm {
            case .md5: Array(Insecure.MD5.hash(data: message))
            case .hmacSHA256:
                Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(apiKey.utf8))))
            }
        return digest.map { String(format: "%02X", $0) }.joined()
    }

    /// Constant-time comparison of a received signature against the expected one.
    public static func isValid(
        _ signature: String, for parameters: [String: String], apiKey: String, algorithm: Algorithm
    ) -> Bool {
        let expected = Array(sign(parameters, apiKey: apiKey, algorithm: algorithm).utf8)
        let offered = Array(signature.uppercased().utf8)
        guard expected.count == offered.count else { return false }
        return zip(expected, offered).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
