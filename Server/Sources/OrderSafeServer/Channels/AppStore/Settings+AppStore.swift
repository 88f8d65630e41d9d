import AppStore
import ChannelSupport
import Engine
import Foundation
import Ledger
import Logging
import OrderSafeModel
import X509

extension Settings.AppStore {
    /// The channel these settings describe; in production only Apple's published roots are trusted.
    func payments(
        transport: any ProviderTransport, identities: OrderIdentityGenerator, offerHook: MerchantOfferHook?,
        context: EngineContext<any AppStoreLedger>
    ) async throws -> AppStorePayments {
        let (clock, logger) = (context.clock, context.logger)
        let requireApple = environment == .production
        let roots: [Certificate]
        do {
            roots = try AppleRootCertificates.read(paths: rootCertificateFiles, requireApple: requireApple)
        } catch {
            throw SettingsError(key: "appstore.root_certificates", reason: error.description)
        }
        var receipts: ReceiptValidator?
        if !receiptRootCertificateFiles.isEmpty {
            do {
                receipts = ReceiptValidator(
                    rootCertificates: try AppleRootCertificates.read(
                        paths: receiptRootCertificateFiles, requireApple: requireApple))
            } catch {
                throw SettingsError(key: "appstore.receipt_root_certificates", reason: error.description)
            }
        }
        // A Production server also takes Sandbox data (App Review buys in the Sandbox against the production
        // server), through a second verifier; such orders are marked sandbox.
        let verifier = AppStoreVerifier(
            primary: SignedDataVerifier(
                rootCertificates: roots, bundleID: bundleID, appAppleID: appAppleID, environment: environment,
                clock: clock),
            sandbox: environment == .production
                ? SignedDataVerifier(
                    rootCertificates: roots, bundleID: bundleID, appAppleID: appAppleID, environment: .sandbox,
                    clock: clock)
                : nil)
        var client: AppStoreServerAPIClient?
        var offers: AppStoreOfferSigner?
        if let api {
            do {
                client = try await AppStoreServerAPIClient(
                    signingKey: api.signingKey, keyID: api.keyID, issuerID: api.issuerID, bundleID: bundleID,
                    baseURL: api.baseURL,
                    transport: transport, clock: clock, logger: logger)
                // The same In-App Purchase key signs subscription offers.
                offers = try await AppStoreOfferSigner(
                    signingKey: api.signingKey, keyID: api.keyID, issuerID: api.issuerID, bundleID: bundleID)
            } catch {
                throw SettingsError(key: "appstore.api_key", reason: "\(error)")
            }
        }
        return AppStorePayments(
            verifier: verifier, receipts: receipts, api: client, offers: offers, offerHook: offerHook,
            answersConsumptionRequests: answersConsumptionRequests,
            identities: identities,
            context: context)
    }
}

extension Settings {
    /// The AppStore section (`Settings.channels[.appStore]`).
    public var appStore: AppStore? {
        get { channels[.appStore] as? AppStore }
        set { channels[.appStore] = newValue }
    }

    /// The App Store: what signed transactions, receipts and notifications must be verified against.
    public struct AppStore: ChannelSettings {
        public var bundleID: String
        /// Checked on production data when set.
        public var appAppleID: Int64?
        public var environment: AppStoreEnvironment
        /// DER files of the trusted roots for signed data (Apple Root CA - G3).
        public var rootCertificateFiles: [String]
        /// DER files of the trusted roots for StoreKit 1 receipts (Apple Inc. Root); none: receipts are refused.
        public var receiptRootCertificateFiles: [String]
        /// The App Store Server API (history pulls, restores); nil when no in-app purchase key is configured.
        public var api: API?
        /// Answer `CONSUMPTION_REQUEST` notifications with the delivery status (only if users consented to it).
        public var answersConsumptionRequests = false

        public struct API: Sendable {
            /// The in-app purchase key (`.p8`, PEM).
            public var signingKey: String
            public var keyID: String
            public var issuerID: String
            public var baseURL: String
        }
    }
}

extension SettingsReader {
    /// The App Store section: nil when `appstore.bundle_id` is not set.
    func appStore() throws -> Settings.AppStore? {
        guard let bundleID = try string("appstore.bundle_id") else { return nil }
        let environment = try choice("appstore.environment", default: AppStoreEnvironment.production)
        guard environment == .production || environment == .sandbox else {
            throw SettingsError(
                key: "appstore.environment",
                reason: "must be Production or Sandbox on a server (Xcode data is never trusted)")
        }
        if environment == .sandbox,
            try choice("server.environment", default: Settings.Environment.sandbox) == .production
        {
            throw SettingsError(
                key: "appstore.environment",
                reason:
                    "is Sandbox on a production server, which would let testers' free purchases through as real ones; "
                    + "use Production (App Review's Sandbox purchases are still accepted, and marked sandbox)")
        }
        let appAppleID = try string("appstore.app_apple_id").map { text in
            guard let id = Int64(text), id > 0 else {
                throw SettingsError(key: "appstore.app_apple_id", reason: "'\(text)' is not an App Apple ID")
            }
            return id
        }
        if environment == .production, appAppleID == nil {
            throw SettingsError(
                key: "appstore.app_apple_id",
                reason: "is required in Production (App Store Connect → App Information → Apple ID)")
        }
        func files(_ key: String) throws -> [String] {
            try (string(key) ?? "").split(separator: ",").map { path in
                let trimmed = path.trimmingCharacters(in: .whitespaces)
                guard FileManager.default.isReadableFile(atPath: trimmed) else {
                    throw SettingsError(key: key, reason: "cannot read '\(trimmed)'")
                }
                return trimmed
            }
        }
        let roots = try files("appstore.root_certificates")
        guard !roots.isEmpty else {
            throw SettingsError(
                key: "appstore.root_certificates",
                reason: "is required: the path of Apple Root CA - G3 (AppleRootCA-G3.cer)")
        }
        var api: Settings.AppStore.API?
        if let key = try secret("appstore.api_key") {
            guard let keyID = try string("appstore.api_key_id"), let issuerID = try string("appstore.api_issuer_id")
            else {
                throw SettingsError(
                    key: "appstore.api_key_id",
                    reason: "appstore.api_key needs appstore.api_key_id and appstore.api_issuer_id")
            }
            let defaultURL =
                environment == .production ? AppStoreServerAPIClient.productionURL : AppStoreServerAPIClient.sandboxURL
            api = Settings.AppStore.API(
                signingKey: key, keyID: keyID, issuerID: issuerID,
                baseURL: try url("appstore.api_base_url") ?? defaultURL)
        }
        var settings = Settings.AppStore(
            bundleID: bundleID, appAppleID: appAppleID, environment: environment, rootCertificateFiles: roots,
            receiptRootCertificateFiles: try files("appstore.receipt_root_certificates"), api: api)
        let answers = try bool("appstore.answer_consumption_requests", default: false)
        guard !answers || api != nil else {
            throw SettingsError(
                key: "appstore.answer_consumption_requests", reason: "needs the App Store Server API (appstore.api_key)"
            )
        }
        settings.answersConsumptionRequests = answers
        return settings
    }
}
