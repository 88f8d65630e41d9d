import Alipay
import Foundation
import OrderSafeModel

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

extension Settings {
    /// The Alipay section (`Settings.channels[.alipay]`).
    public var alipay: Alipay? {
        get { channels[.alipay] as? Alipay }
        set { channels[.alipay] = newValue }
    }

    /// The merchant's Alipay account. Nil: in the sandbox the built-in simulator stands in; in production the
    /// channel is off (and a catalog selling through it stops the start).
    public struct Alipay: ChannelSettings {
        public var appID: String
        /// PEM or the console's base64 text.
        public var appPrivateKey: String
        /// Public-key mode: the Alipay public key (PEM or base64 text).
        public var publicKey: String?
        /// Certificate mode: the app certificate, Alipay certificate and Alipay root certificate (PEM texts).
        public var certificates: (app: String, alipay: String, root: String)?
        public var sellerID: String?
        public var gatewayURL: String
        /// The public URL of `POST /v1/notify/alipay`, sent as `notify_url`.
        public var notifyURL: String

        /// The gateway is Alipay's sandbox, whose money is not real: every sandbox host is under `alipaydev.com`
        /// (`openapi.alipaydev.com` before 2023, `openapi-sandbox.dl.alipaydev.com` since; github.com/fzlee/alipay
        /// issue 156).
        var isAlipaySandbox: Bool { URL(string: gatewayURL)?.host?.hasSuffix(".alipaydev.com") == true }
    }
}

extension SettingsReader {
    /// The Alipay section: nil when `alipay.app_id` is not set.
    func alipay() throws -> Settings.Alipay? {
        guard let appID = try string("alipay.app_id") else { return nil }
        guard let privateKey = try secret("alipay.app_private_key") else {
            throw SettingsError(key: "alipay.app_private_key", reason: "is required when alipay.app_id is set")
        }
        let publicKey = try secret("alipay.public_key")
        let certificates = try [
            file("alipay.app_cert_file"), file("alipay.public_cert_file"), file("alipay.root_cert_file"),
        ]
        let certificateMode = certificates.compactMap { $0 }
        guard (publicKey != nil) != (certificateMode.count == 3) else {
            throw SettingsError(
                key: "alipay.public_key",
                reason: "give either the Alipay public key (public-key mode) or all three of alipay.app_cert_file, "
                    + "alipay.public_cert_file and alipay.root_cert_file (certificate mode)")
        }
        guard let notifyURL = try url("alipay.notify_url") else {
            throw SettingsError(
                key: "alipay.notify_url", reason: "is required: the public URL of POST /v1/notify/alipay")
        }
        return Settings.Alipay(
            appID: appID, appPrivateKey: privateKey, publicKey: publicKey,
            certificates: certificateMode.count == 3
                ? (certificateMode[0], certificateMode[1], certificateMode[2]) : nil,
            sellerID: try string("alipay.seller_id"),
            gatewayURL: try url("alipay.gateway_url") ?? "https://openapi.alipay.com/gateway.do", notifyURL: notifyURL)
    }
}
