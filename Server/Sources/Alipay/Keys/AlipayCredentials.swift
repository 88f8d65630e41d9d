import ChannelSupport
import Foundation
import _CryptoExtras

/// The merchant's Alipay identity: app id, the app private key that signs requests, and the Alipay public key
/// that verifies notifications and responses (public-key mode), or the certificates of certificate mode.
public struct AlipayCredentials: Sendable {
    public let appID: String
    let appPrivateKey: _RSA.Signing.PrivateKey
    let alipayPublicKey: _RSA.Signing.PublicKey
    /// Certificate mode only: the `app_cert_sn` and `alipay_root_cert_sn` request parameters.
    public let certificateSerials: CertificateSerials?

    /// The serial numbers sent with every request in certificate mode.
    public struct CertificateSerials: Sendable, Hashable {
        public let appCertSN: String
        public let alipayRootCertSN: String
    }

    /// Public-key mode: both keys as PEM (PKCS#1 or PKCS#8) or as the base64 text the Alipay console shows.
    public init(appID: String, appPrivateKey: String, alipayPublicKey: String) throws(AlipayKeyError) {
        try self.init(
            appID: appID, privateKey: try RSAKeyText.privateKey(appPrivateKey, what: "the app private key"),
            publicKey: try RSAKeyText.publicKey(alipayPublicKey, what: "the Alipay public key"), serials: nil)
    }

    /// Certificate mode: the app private key, the app public-key certificate, the Alipay public-key certificate
    /// (its first certificate is used) and the Alipay root certificate file, all PEM.
    public init(
        appID: String, appPrivateKey: String, appCertificate: String, alipayCertificate: String,
        alipayRootCertificate: String
    ) throws(AlipayKeyError) {
        guard let alipayLeaf = try AlipayCertificateSN.certificates(inPEM: alipayCertificate).first else {
            throw .badCertificate("the Alipay public-key certificate file holds no certificate")
        }
        let publicKey: _RSA.Signing.PublicKey
        do {
            publicKey = try _RSA.Signing.PublicKey(derRepresentation: alipayLeaf.publicKey.subjectPublicKeyInfoBytes)
        } catch {
            throw .badCertificate("the Alipay certificate does not hold an RSA key of at least 2048 bits")
        }
        try self.init(
            appID: appID, privateKey: try RSAKeyText.privateKey(appPrivateKey, what: "the app private key"),
            publicKey: publicKey,
            serials: CertificateSerials(
                appCertSN: try AlipayCertificateSN.serial(ofPEM: appCertificate),
                alipayRootCertSN: try AlipayCertificateSN.rootSerial(ofPEM: alipayRootCertificate)))
    }

    init(
        appID: String, privateKey: _RSA.Signing.PrivateKey, publicKey: _RSA.Signing.PublicKey,
        serials: CertificateSerials?
    )
        throws(AlipayKeyError)
    {
        guard privateKey.publicKey.derRepresentation != publicKey.derRepresentation else {
            throw .appPublicKeyConfiguredAsAlipayKey
        }
        self.appID = appID
        appPrivateKey = privateKey
        alipayPublicKey = publicKey
        certificateSerials = serials
    }

    /// SHA256withRSA (PKCS#1 v1.5) of `content`, base64: Alipay's RSA2.
    func sign(_ content: String) throws -> String {
        try RSA2.sign(content, with: appPrivateKey)
    }

    /// True when `signature` (base64) is Alipay's RSA2 signature over `content`.
    func isAlipaySignature(_ signature: String, over content: some DataProtocol) -> Bool {
        RSA2.verify(signature, over: content, with: alipayPublicKey)
    }
}

/// Alipay's RSA2: SHA256withRSA, PKCS#1 v1.5 padding, base64 signatures.
public typealias RSA2 = SHA256WithRSA
