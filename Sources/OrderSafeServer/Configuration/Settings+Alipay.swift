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
            throw SettingsError(key: "alipay.public_key", reason: error.description)
        }
    }
}
