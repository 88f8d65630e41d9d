import Foundation
import _CryptoExtras

/// Alipay-side signing, for simulators and tests that play Alipay: notifications and gateway responses signed
/// the way Alipay signs them, with Alipay's private key.
public struct AlipaySideSigner: Sendable {
    let privateKey: _RSA.Signing.PrivateKey

    public init(privateKey: _RSA.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    /// The public key merchants configure as "the Alipay public key", PEM.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// A notification form body: every field, plus `sign_type=RSA2` and `sign` over all but those two.
    public func notificationBody(_ fields: [String: String]) throws -> String {
        var signed = fields
        signed["sign_type"] = "RSA2"
        signed["sign"] = try sign(SignContent.make(signed, excluding: SignContent.notificationExclusions))
        return FormEncoding.encode(signed)
    }

    /// A gateway response body: `{"<method>_response": <json>, "sign": "<RSA2 over the exact json text>"}`.
    public func responseBody(method: String, json: String) throws -> String {
        let name = method.replacingOccurrences(of: ".", with: "_") + "_response"
        return #"{"\#(name)":\#(json),"sign":"\#(try sign(json))"}"#
    }

    public func sign(_ content: String) throws -> String {
        try RSA2.sign(content, with: privateKey)
    }
}

extension AlipayCredentials {
    /// True when `signature` is the app's RSA2 signature over `content` (what Alipay checks on every request).
    public static func isAppSignature(_ signature: String, over content: String, appPublicKey: _RSA.Signing.PublicKey)
        -> Bool
    {
        RSA2.verify(signature, over: Array(content.utf8), with: appPublicKey)
    }
}
