import Foundation
import _CryptoExtras

/// Reads RSA keys the way merchants paste them: PEM (PKCS#1 or PKCS#8, public SPKI or PKCS#1) or the bare base64
/// body the Alipay console shows, with any whitespace or line breaks.
enum RSAKeyText {
    static func privateKey(_ text: String, what: String) throws(AlipayKeyError) -> _RSA.Signing.PrivateKey {
        let key: _RSA.Signing.PrivateKey
        do {
            if text.contains("-----BEGIN") {
                key = try _RSA.Signing.PrivateKey(pemRepresentation: text)
            } else {
                guard let der = bareBase64(text) else { throw AlipayKeyError.unreadable(what: what) }
                key = try _RSA.Signing.PrivateKey(derRepresentation: der)
            }
        } catch {
            if let keySize = smallKeySize(text, isPrivate: true) { throw .tooShort(what: what, bits: keySize) }
            throw .unreadable(what: what)
        }
        return key
    }

    static func publicKey(_ text: String, what: String) throws(AlipayKeyError) -> _RSA.Signing.PublicKey {
        let key: _RSA.Signing.PublicKey
        do {
            if text.contains("-----BEGIN") {
                key = try _RSA.Signing.PublicKey(pemRepresentation: text)
            } else {
                guard let der = bareBase64(text) else { throw AlipayKeyError.unreadable(what: what) }
                key = try _RSA.Signing.PublicKey(derRepresentation: der)
            }
        } catch {
            if let keySize = smallKeySize(text, isPrivate: false) { throw .tooShort(what: what, bits: keySize) }
            throw .unreadable(what: what)
        }
        return key
    }

    /// The DER bytes of a base64 body with any whitespace; nil when it is not base64.
    static func bareBase64(_ text: String) -> Data? {
        let compact = text.filter { !$0.isWhitespace }
        guard !compact.isEmpty else { return nil }
        return Data(base64Encoded: compact)
    }

    /// When the text is a readable RSA key below 2048 bits, its size (to say "too short" rather than "unreadable").
    private static func smallKeySize(_ text: String, isPrivate: Bool) -> Int? {
        if isPrivate {
            let key =
                text.contains("-----BEGIN")
                ? try? _RSA.Signing.PrivateKey(unsafePEMRepresentation: text)
                : bareBase64(text).flatMap { try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: $0) }
            return key?.keySizeInBits
        }
        let key =
            text.contains("-----BEGIN")
            ? try? _RSA.Signing.PublicKey(unsafePEMRepresentation: text)
            : bareBase64(text).flatMap { try? _RSA.Signing.PublicKey(unsafeDERRepresentation: $0) }
        return key?.keySizeInBits
    }
}
