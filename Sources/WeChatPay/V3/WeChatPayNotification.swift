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

    struct Envelope: Decodable {
        struct Resource: Decodable {
            var algorithm: String
            var ciphertext: String
            var nonce: String
            var associated_data: String?
        }

        var id: String?
        var create_time: String?
        var event_type: String?
        var summary: String?
        var resource: Resource
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

    public func parse(headers: [String: String], body: [UInt8]) throws(WeChatPayError) -> WeChatPayNotification {
        try verifier.verify(headers: headers, body: body)
        let envelope: WeChatPayNotification.Envelope
        do {
            envelope = try JSONDecoder().decode(WeChatPayNotification.Envelope.self, from: Data(body))
        } catch {
            throw .malformedNotification("the body is not a v3 notification envelope")
        }
        guard envelope.resource.algorithm == "AEAD_AES_256_GCM" else { throw .unsupportedAlgorithm(envelope.resource.algorithm) }
        let plaintext = try cipher.decrypt(
            ciphertext: envelope.resource.ciphertext, nonce: envelope.resource.nonce,
            associatedData: envelope.resource.associated_data ?? "")
        return WeChatPayNotification(
            id: envelope.id, eventType: envelope.event_type, createTime: envelope.create_time, summary: envelope.summary,
            plaintext: plaintext)
    }
}
