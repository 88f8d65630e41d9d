/// Why a key or certificate could not be used; messages name the classic configuration mistakes.
public enum AlipayKeyError: Error, Equatable, CustomStringConvertible {
    /// Not PEM (PKCS#1 or PKCS#8) and not a bare base64 DER body.
    case unreadable(what: String)
    /// RSA keys shorter than 2048 bits are refused (RSA2 requires 2048).
    case tooShort(what: String, bits: Int)
    /// The configured Alipay public key is the app's own public key (derived from the app private key).
    case appPublicKeyConfiguredAsAlipayKey
    /// A certificate could not be parsed or has no RSA key.
    case badCertificate(String)
    /// The certificate chain file holds no SHA-1/SHA-256-with-RSA certificate.
    case noRSARootCertificate

    public var description: String {
        switch self {
        case .unreadable(let what):
            "\(what) is neither PEM (PKCS#1 or PKCS#8) nor the base64 key text the Alipay console shows"
        case .tooShort(let what, let bits):
            "\(what) is a \(bits)-bit RSA key; RSA2 needs at least 2048 bits"
        case .appPublicKeyConfiguredAsAlipayKey:
            "the configured Alipay public key is your app's own public key (it matches the app private key); "
                + "copy the \"Alipay public key\" (支付宝公钥) from the Alipay console instead"
        case .badCertificate(let detail):
            "certificate unusable: \(detail)"
        case .noRSARootCertificate:
            "the Alipay root certificate file holds no SHA-1/SHA-256-with-RSA certificate"
        }
    }
}
