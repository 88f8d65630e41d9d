import ChannelSupport
import Crypto
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import X509

/// Verifies and decodes the App Store's signed data: transactions, renewal info, notifications (with their
/// nested signed data) and app transactions. ES256 only; `x5c` of exactly three certificates chained to a
/// trusted root with Apple's OIDs, valid at the validation time; then bundle id, environment and, in production,
/// the app Apple id. Xcode and LocalTesting data carry no chain to check: they are accepted only by a verifier
/// configured for that environment, never by a production or sandbox one.
public struct SignedDataVerifier: Sendable {
    /// When certificates must be valid.
    public enum ValidationTime: Sendable, Hashable {
        /// The payload's `signedDate` (app transactions: `receiptCreationDate`), or now when it has none: old
        /// data verifies at its own date.
        case signed
        /// Now.
        case now
        case fixed(Date)
    }

    public let environment: AppStoreEnvironment
    /// Nil: not checked (the offline tool without `--bundle-id`).
    public let bundleID: String?
    /// Checked in production when set.
    public let appAppleID: Int64?
    let chains: ChainVerifier
    let cache: VerifiedChainCache
    let validationTime: ValidationTime
    let online: OnlineRevocationCheck?
    let clock: any WallClock

    /// With `onlineChecks`, certificates are validated now and their revocation asked of their OCSP responders
    /// (as Apple's libraries do with online checks enabled); `validationTime` is then ignored.
    public init(
        rootCertificates: [Certificate], bundleID: String?, appAppleID: Int64?, environment: AppStoreEnvironment,
        validationTime: ValidationTime = .signed, onlineChecks: OnlineRevocationCheck? = nil,
        cache: VerifiedChainCache = VerifiedChainCache(), clock: any WallClock = SystemClock()
    ) {
        chains = ChainVerifier(roots: rootCertificates)
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
        self.validationTime = onlineChecks == nil ? validationTime : .now
        self.online = onlineChecks
        self.cache = cache
        self.clock = clock
    }

    public func verifyTransaction(_ jws: some StringProtocol) async throws(VerificationError) -> JWSTransaction {
        let object = try await verified(jws, dateField: "signedDate")
        let transaction = try decode { () throws(JSONObject.Error) in try JWSTransaction(object) }
        try check(bundleID: transaction.bundleId)
        try check(environment: transaction.environment)
        return transaction
    }

    public func verifyRenewalInfo(_ jws: some StringProtocol) async throws(VerificationError) -> JWSRenewalInfo {
        let object = try await verified(jws, dateField: "signedDate")
        let renewal = try decode { () throws(JSONObject.Error) in try JWSRenewalInfo(object) }
        try check(environment: renewal.environment)
        return renewal
    }

    public func verifyAppTransaction(_ jws: some StringProtocol) async throws(VerificationError) -> AppTransaction {
        let object = try await verified(jws, dateField: "receiptCreationDate")
        let app = try decode { () throws(JSONObject.Error) in try AppTransaction(object) }
        try check(bundleID: app.bundleId)
        try check(appAppleID: app.appAppleId)
        try check(environment: app.receiptType)
        return app
    }

    /// A notification, with `data.signedTransactionInfo` and `data.signedRenewalInfo` verified as well.
    public func verifyNotification(_ jws: some StringProtocol) async throws(VerificationError) -> AppStoreNotification {
        let object = try await verified(jws, dateField: "signedDate")
        var notification = try decode { () throws(JSONObject.Error) in try AppStoreNotification(object) }
        let (bundleID, appAppleID, environment): (String?, Int64?, String?) =
            if let data = notification.data {
                (data.bundleId, data.appAppleId, data.environment)
            } else if let summary = notification.summary {
                (summary.bundleId, summary.appAppleId, summary.environment)
            } else if let token = notification.externalPurchaseToken {
                (token.bundleId, token.appAppleId, token.environment.rawValue)
            } else if let app = notification.appData { (app.bundleId, app.appAppleId, app.environment) } else {
                (nil, nil, nil)
            }
        try check(bundleID: bundleID)
        try check(appAppleID: appAppleID)
        try check(environment: environment)
        if let signed = notification.data?.signedTransactionInfo {
            notification.transaction = try await verifyTransaction(signed)
        }
        if let signed = notification.data?.signedRenewalInfo {
            notification.renewalInfo = try await verifyRenewalInfo(signed)
        }
        return notification
    }

    /// What a JWS turned out to be, for tools that take any of them.
    public enum Kind: String, Sendable {
        case transaction, renewalInfo, notification, appTransaction
    }

    /// Verifies any kind of signed data, telling which it is by its payload; returns the kind and the payload's
    /// JSON exactly as signed (Apple's field names).
    public func verifyAny(_ jws: some StringProtocol) async throws(VerificationError) -> (kind: Kind, payload: [UInt8])
    {
        let token = try CompactJWS(jws)
        guard let object = try? JSONObject(token.payload) else {
            throw .invalidJWTFormat("the payload is not a JSON object")
        }
        // Renewal info carries no bundleId but, lately, an appTransactionId: its own required members decide
        // before the app transaction's, or it would be held to an app transaction's bundle check.
        let kind: Kind =
            if object.contains("notificationType") {
                .notification
            } else if object.contains("autoRenewStatus") || object.contains("autoRenewProductId") {
                .renewalInfo
            } else if object.contains("receiptType")
                || object.contains("appTransactionId") && !object.contains("transactionId")
            { .appTransaction } else if object.contains("transactionId") || object.contains("bundleId") {
                .transaction
            } else { .renewalInfo }
        switch kind {
        case .transaction: _ = try await verifyTransaction(jws)
        case .renewalInfo: _ = try await verifyRenewalInfo(jws)
        case .notification: _ = try await verifyNotification(jws)
        case .appTransaction: _ = try await verifyAppTransaction(jws)
        }
        return (kind, token.payload)
    }

    // MARK: Signature and chain

    /// The payload of `jws`, once its signature and chain are verified (or, for local testing, just decoded).
    /// The signature is checked with the leaf's key before the payload is parsed, so unsigned bytes cost one P-256
    /// check and no parsing; the chain is then validated at the payload's date.
    func verified(_ jws: some StringProtocol, dateField: String) async throws(VerificationError) -> JSONObject {
        let token = try CompactJWS(jws)
        if environment.isLocal { return try Self.payload(token) }

        let now = clock.now()
        let cached = cache.entry(token.headerSegment, now: now)
        let x5c = cached == nil ? try Self.x5c(header: token.header()) : []
        if cached == nil, x5c.count != 3 { throw .invalidChainLength(x5c.count) }
        let leafKey = if let cached { cached.leafKey } else { try ChainVerifier.leafKey(x5c[0]) }
        // The digest taken through the hasher's buffer entry point: the key's `DataProtocol` one hashes through
        // swift-crypto's generic code, not specialised for our bytes.
        var hash = SHA256()
        token.signingInput.withUnsafeBytes { hash.update(bufferPointer: $0) }
        let digest = hash.finalize()
        guard token.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            leafKey.isValidSignature(signature, for: digest)
        else { throw .verificationFailure }

        let payload = try Self.payload(token)
        let at: Date
        switch validationTime {
        case .signed:
            let signed = (try? payload.optionalFlooredInt(dateField)) ?? nil
            at = signed.map { Date(millisecondsSince1970: $0) } ?? now
        case .now: at = now
        case .fixed(let date): at = date
        }
        if let cached, cached.covers(at) { return payload }
        let verified = try await chains.verify(
            x5c: cached == nil ? x5c : try Self.x5c(header: token.header()), at: at, online: online)
        guard verified.leafKey.rawRepresentation == leafKey.rawRepresentation else { throw .verificationFailure }
        cache.store(verified, for: token.headerSegment, now: now)
        return payload
    }

    /// Whether a JWS that failed with `INVALID_CHAIN` carries a chain signed up to one of Apple's published roots or
    /// a root this verifier trusts: then its failure may be this verifier's settings' (a root it was not given, a
    /// validation time); otherwise the chain is someone's own, a forgery.
    public func chainAnchorsInKnownRoot(_ jws: some StringProtocol) -> Bool {
        guard let token = try? CompactJWS(jws), let header = try? token.header(),
            let x5c = try? Self.x5c(header: header)
        else { return false }
        return chains.anchorsInKnownRoot(x5c: x5c)
    }

    private static func payload(_ token: CompactJWS) throws(VerificationError) -> JSONObject {
        do {
            return try JSONObject(token.payload)
        } catch {
            throw .invalidJWTFormat("the payload is not a JSON object (\(error))")
        }
    }

    /// The `x5c` of an ES256 header.
    static func x5c(header: [UInt8]) throws(VerificationError) -> [String] {
        do {
            let object = try JSONObject(header)
            guard try object.optionalString("alg") == "ES256" else {
                throw VerificationError.invalidJWTFormat("alg is not ES256")
            }
            guard let x5c = try object.optionalStrings("x5c") else {
                throw VerificationError.invalidJWTFormat("the header has no x5c")
            }
            return x5c
        } catch let error as VerificationError {
            throw error
        } catch {
            throw .invalidJWTFormat("the header is not a JSON object (\(error))")
        }
    }

    // MARK: Checks

    private func decode<T>(_ body: () throws(JSONObject.Error) -> T) throws(VerificationError) -> T {
        do {
            return try body()
        } catch {
            throw .invalidJWTFormat("payload: \(error)")
        }
    }

    private func check(bundleID: String?) throws(VerificationError) {
        guard let expected = self.bundleID, bundleID != expected else { return }
        throw .invalidAppIdentifier("bundle id \(bundleID ?? "(none)") is not \(expected)")
    }

    private func check(appAppleID: Int64?) throws(VerificationError) {
        guard environment == .production, let expected = self.appAppleID, appAppleID != expected else { return }
        throw .invalidAppIdentifier("app Apple id \(appAppleID.map(String.init) ?? "(none)") is not \(expected)")
    }

    private func check(environment: String?) throws(VerificationError) {
        guard environment != self.environment.rawValue else { return }
        throw .invalidEnvironment(
            "data from \(environment ?? "(no environment)") at a \(self.environment.rawValue) verifier")
    }
}
