import AppStore
import Engine
import Ledger
import Logging
import OrderSafeModel
import X509

extension Settings.AppStore {
    /// The channel these settings describe; in production only Apple's published roots are trusted.
    func payments(
        ledger: any LedgerStore, catalog: ActiveCatalog, identities: OrderIdentityGenerator, clock: any WallClock, logger: Logger
    ) throws -> AppStorePayments {
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
                    rootCertificates: try AppleRootCertificates.read(paths: receiptRootCertificateFiles, requireApple: requireApple))
            } catch {
                throw SettingsError(key: "appstore.receipt_root_certificates", reason: error.description)
            }
        }
        let verifier = SignedDataVerifier(
            rootCertificates: roots, bundleID: bundleID, appAppleID: appAppleID, environment: environment, clock: clock)
        return AppStorePayments(
            verifier: verifier, receipts: receipts, ledger: ledger, catalog: catalog, identities: identities, clock: clock, logger: logger)
    }
}
