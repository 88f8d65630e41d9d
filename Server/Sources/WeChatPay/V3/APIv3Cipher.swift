import Crypto
import Foundation

/// AEAD_AES_256_GCM with the merchant's APIv3 key: how WeChat Pay encrypts notification resources and the
/// platform certificates of `GET /v3/certificates`.
public struct APIv3Cipher: Sendable {
    let key: SymmetricKey

    /// `key` is the APIv3 key as set in the merchant platform: 32 ASCII bytes.
    public init(apiV3Key: String) throws(WeChatPayError) {
        let bytes = Array(apiV3Key.utf8)
        guard bytes.count == 32 else { throw .invalidAPIv3KeyLength(bytes.count) }
        key = SymmetricKey(data: bytes)
    }

    /// For known-answer vectors with shorter keys (AES-128-GCM); real APIv3 keys are 32 bytes.
    init(rawKey: [UInt8]) {
        key = SymmetricKey(data: rawKey)
    }

    /// Decrypts a base64 `ciphertext` (ciphertext ‖ 16-byte tag) with its `nonce` and `associated_data`.
    public func decrypt(ciphertext: String, nonce: String, associatedData: String) throws(WeChatPayError) -> [UInt8] {
        guard let combined = Data(base64Encoded: ciphertext), combined.count > 16 else { throw .decryptionFailed }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: Data(nonce.utf8)), ciphertext: combined.dropLast(16),
                tag: combined.suffix(16))
            return Array(try AES.GCM.open(box, using: key, authenticating: Data(associatedData.utf8)))
        } catch {
            throw .decryptionFailed
        }
    }

    /// Encrypts as WeChat Pay does (for the sandbox and tests): base64 of ciphertext ‖ tag.
    public func encrypt(_ plaintext: [UInt8], nonce: String, associatedData: String) throws -> String {
        let box = try AES.GCM.seal(
            plaintext, using: key, nonce: try AES.GCM.Nonce(data: Data(nonce.utf8)),
            authenticating: Data(associatedData.utf8))
        return (box.ciphertext + box.tag).base64EncodedString()
    }
}
