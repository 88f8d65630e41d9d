import ChannelSupport
import Foundation

/// A v3 notification envelope, verified and with its resource decrypted.
public struct WeChatPayNotification: Sendable, Hashable {
    /// Envelope fields; a bare resource (as in some SDKs' fixtures) has none of them.
    public var id: String?
    public var eventType: String?
    public var createTime: String?
    public var summary: String?
    /// The decrypted `resource`: JSON text (a transaction, a refund, …) or, for certificates, PEM.
    public var plaintext: [UInt8]
}

/// An encrypted `resource` (notification) or `encrypt_certificate` (`/v3/certificates`) object.
struct EncryptedResource {
    var algorithm: String
    var ciphertext: String
    var nonce: String
    var associatedData: String

    init(_ object: JSONObject) throws(JSONObject.Error) {
        algorithm = try object.string("algorithm")
        ciphertext = try object.string("ciphertext")
        nonce = try object.string("nonce")
        associatedData = try object.optionalString("associated_data") ?? ""
    }

    func decrypt(with cipher: APIv3Cipher) throws(WeChatPayError) -> [UInt8] {
        guard algorithm == "AEAD_AES_256_GCM" else { throw .unsupportedAlgorithm(algorithm) }
        return try cipher.decrypt(ciphertext: ciphertext, nonce: nonce, associatedData: associatedData)
    }
}

/// Verifies (on the raw bytes) and decrypts v3 notifications.
public struct WeChatPayNotificationParser: Sendable {
    let verifier: SignedMessageVerifier
    let cipher: APIv3Cipher

    public init(verifier: SignedMessageVerifier, cipher: APIv3Cipher) {
        self.verifier = verifier
        self.cipher = cipher
    }

    public func parse(headers: [String: String], body: [UInt8]) async throws(WeChatPayError) -> WeChatPayNotification {
        try await verifier.verify(headers: headers, body: body)
        return try Self.decrypt(body: body, cipher: cipher)
    }

    /// Decrypts a body whose signature has already been verified.
    public static func decrypt(body: [UInt8], cipher: APIv3Cipher) throws(WeChatPayError) -> WeChatPayNotification {
        let envelope: JSONObject
        let resource: EncryptedResource
        do {
            envelope = try JSONObject(body)
            resource = try EncryptedResource(try envelope.object("resource"))
        } catch {
            throw .malformedNotification("the body is not a v3 notification envelope (\(error))")
        }
        let plaintext = try resource.decrypt(with: cipher)
        return WeChatPayNotification(
            id: try? envelope.optionalString("id"), eventType: try? envelope.optionalString("event_type"),
            createTime: try? envelope.optionalString("create_time"), summary: try? envelope.optionalString("summary"),
            plaintext: plaintext)
    }
}
