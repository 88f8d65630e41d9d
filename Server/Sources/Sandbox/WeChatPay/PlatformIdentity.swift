import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// One WeChat Pay platform key with its self-issued certificate, as the sandbox signs with it.
struct PlatformIdentity: Sendable {
    let key: _RSA.Signing.PrivateKey
    /// The certificate's serial number, uppercase hex: the `Wechatpay-Serial` of what this key signs.
    let serial: String
    let certificatePEM: String
    let notBefore: Date
    let notAfter: Date

    init(key: _RSA.Signing.PrivateKey, serialNumber: [UInt8], notBefore: Date, lifetime: TimeInterval) throws {
        let name = try DistinguishedName {
            CountryName("CN")
            OrganizationName("Tenpay.com")
            OrganizationalUnitName("Tenpay.com CA Center")
            CommonName("Tenpay.com Root CA (OrderSafe sandbox)")
        }
        let subject = try DistinguishedName {
            CountryName("CN")
            OrganizationName("OrderSafe sandbox WeChat Pay")
            CommonName("Tenpay.com sign")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(bytes: serialNumber),
            publicKey: Certificate.PublicKey(key.publicKey), notValidBefore: notBefore,
            notValidAfter: notBefore + lifetime,
            issuer: name, subject: subject, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: Certificate.Extensions(),
            issuerPrivateKey: Certificate.PrivateKey(key))
        self.key = key
        serial = serialNumber.map { String(format: "%02X", $0) }.joined()
        certificatePEM = try certificate.serializeAsPEM().pemString
        self.notBefore = notBefore
        notAfter = notBefore + lifetime
    }
}
