import AppStore
import ChannelSupport
import Engine
import Ledger
import Logging
import OrderSafeModel
import X509

extension Settings.AppStore {
    /// The channel these settings describe; in production only Apple's published roots are trusted.
    func payments(transport: any ProviderTransport, identities: OrderIdentityGenerator, context: EngineContext)
        async throws
        -> AppStorePayments
    {
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
        if let api {
            do {
                client = try await AppStoreServerAPIClient(
                    signingKey: api.signingKey, keyID: api.keyID, issuerID: api.issuerID, bundleID: bundleID,
                    baseURL: api.baseURL,
                    transport: transport, clock: clock, logger: logger)
            } catch {
                throw SettingsError(key: "appstore.api_key", reason: error.description)
            }
        }
        return AppStorePayments(
            verifier: verifier, receipts: receipts, api: client, answersConsumptionRequests: answersConsumptionRequests,
            identities: identities,
            context: context)
    }
}
