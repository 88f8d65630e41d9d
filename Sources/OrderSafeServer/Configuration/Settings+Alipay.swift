import Alipay

extension Settings.Alipay {
    /// The credentials these settings describe, with a configuration error naming the key on any mistake.
    func credentials() throws -> AlipayCredentials {
        do {
            if let certificates {
                return try AlipayCredentials(
                    appID: appID, appPrivateKey: appPrivateKey, appCertificate: certificates.app,
                    alipayCertificate: certificates.alipay, alipayRootCertificate: certificates.root)
            }
            return try AlipayCredentials(appID: appID, appPrivateKey: appPrivateKey, alipayPublicKey: publicKey ?? "")
        } catch {
            throw SettingsError(key: key(for: error), reason: error.description)
        }
    }

    /// The setting a key error is about.
    private func key(for error: AlipayKeyError) -> String {
        switch error {
        case .unreadable(let what), .tooShort(let what, _):
            what == "the app private key" ? "alipay.app_private_key" : "alipay.public_key"
        case .appPublicKeyConfiguredAsAlipayKey:
            certificates == nil ? "alipay.public_key" : "alipay.public_cert_file"
        case .badCertificate:
            "alipay.public_cert_file"
        case .noRSARootCertificate:
            "alipay.root_cert_file"
        }
    }
}
