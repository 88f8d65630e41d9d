import ChannelSupport
import Foundation
import X509
import _CryptoExtras

/// WeChat Pay's side of the signatures: platform certificates by serial, or public keys by `PUB_KEY_ID_…`.
/// Several may be valid at once while WeChat Pay rotates them.
public struct WeChatPayVerificationKeys: Sendable {
    private var keys: [String: _RSA.Signing.PublicKey] = [:]

    public init() {}

    /// Adds a platform certificate (PEM) under `serial`, by default its own serial number in uppercase hex.
    @discardableResult
    public mutating func addCertificate(pem: String, serial configuredSerial: String? = nil) throws(WeChatPayError)
        -> String
    {
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: pem)
        } catch {
            throw .unreadableCertificate("\(error)")
        }
        let serial = configuredSerial ?? certificate.serialNumber.bytes.map { String(format: "%02X", $0) }.joined()
        do {
            keys[serial] = try _RSA.Signing.PublicKey(
                derRepresentation: certificate.publicKey.subjectPublicKeyInfoBytes)
        } catch {
            throw .unreadableCertificate("certificate \(serial) does not hold an RSA key of at least 2048 bits")
        }
        return serial
    }

    /// Adds a WeChat Pay public key (public-key mode) under its id, e.g. `PUB_KEY_ID_0114232134912410000000000000`.
    public mutating func addPublicKey(id: String, pem: String) throws(WeChatPayError) {
        do {
            keys[id] = try _RSA.Signing.PublicKey(pemRepresentation: pem)
        } catch {
            throw .unreadableKey("the WeChat Pay public key \(id)")
        }
    }

    /// The key for a `Wechatpay-Serial` value (serials match as given or uppercased).
    func key(serial: String) throws(WeChatPayError) -> _RSA.Signing.PublicKey {
        guard let key = lookup(serial) else { throw .unknownSerial(serial) }
        return key
    }

    /// Whether a key for `serial` is held, without sorting anything (checked on every verification).
    func contains(serial: String) -> Bool { lookup(serial) != nil }

    var isEmpty: Bool { keys.isEmpty }

    private func lookup(_ serial: String) -> _RSA.Signing.PublicKey? { keys[serial] ?? keys[serial.uppercased()] }

    public var serials: [String] { keys.keys.sorted() }
}
