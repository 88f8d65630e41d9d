import Foundation
import _CryptoExtras

/// SHA256withRSA (RSASSA-PKCS1-v1_5 over SHA-256), base64: Alipay's RSA2 and every WeChat Pay v3 signature.
public enum SHA256WithRSA {
    public static func sign(_ message: String, with key: _RSA.Signing.PrivateKey) throws -> String {
        try key.signature(for: Data(message.utf8), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()
    }

    /// False for anything but a valid signature of exactly the key's size: bad base64, wrong length, wrong key.
    public static func verify(_ signature: String, over message: some DataProtocol, with key: _RSA.Signing.PublicKey)
        -> Bool
    {
        guard let bytes = Data(base64Encoded: signature), bytes.count == key.keySizeInBits / 8 else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: bytes), for: message, padding: .insecurePKCS1v1_5)
    }
}
